-- Up Migration

-- list-users' `contains` and `ends_with` search (the console's user search) on email and name: trigram
-- indexes (pg_trgm), which serve LIKE '%x%' however many users there are; without them every search reads
-- the whole table. The read model holds these columns in plaintext (it is what admins search; erasure
-- removes the row), so they can be indexed. pg_trgm ships with Postgres's contrib (Debian's server package,
-- embedded-postgres, the managed services) and is a trusted extension (a database owner may create it);
-- where it is not available or may not be created, this step still succeeds and search scans as before:
-- a notice says so, and running this step's DO block again once the extension is there adds the indexes.
DO $$
DECLARE
  trgm_schema name;
BEGIN
  IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm') THEN
    BEGIN
      CREATE EXTENSION IF NOT EXISTS pg_trgm;
    EXCEPTION WHEN insufficient_privilege THEN
      RAISE NOTICE 'pg_trgm may not be created by this role: user search by contains stays unindexed';
    END;
  END IF;
  SELECT n.nspname INTO trgm_schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm';
  IF trgm_schema IS NULL THEN
    RAISE NOTICE 'pg_trgm is not available: user search by contains stays unindexed';
    RETURN;
  END IF;
  -- The operator class named with its schema: an extension installed before, elsewhere than the search path.
  EXECUTE format('CREATE INDEX IF NOT EXISTS user_email_trigram ON "user" USING gin (email %I.gin_trgm_ops)', trgm_schema);
  EXECUTE format('CREATE INDEX IF NOT EXISTS user_name_trigram ON "user" USING gin (name %I.gin_trgm_ops)', trgm_schema);
END $$;

-- Down Migration
DROP INDEX IF EXISTS user_name_trigram;
DROP INDEX IF EXISTS user_email_trigram;
