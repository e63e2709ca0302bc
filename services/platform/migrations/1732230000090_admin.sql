-- Up Migration

-- better-auth's admin plugin columns: the user's role (comma-separated when several) and ban, and the
-- impersonator of a session. A user never given a role holds `user`, as better-auth's create hook sets it.
ALTER TABLE "user" ADD COLUMN role text NOT NULL DEFAULT 'user';
ALTER TABLE "user" ADD COLUMN banned boolean NOT NULL DEFAULT false;
ALTER TABLE "user" ADD COLUMN "banReason" text;
ALTER TABLE "user" ADD COLUMN "banExpires" timestamptz;
ALTER TABLE session ADD COLUMN "impersonatedBy" text;

-- list-users on big tenants: prefix searches (LIKE 'x%') use the pattern indexes whatever the database
-- collation; the default order (createdAt, then id) is walked in index order and pages without a sort.
CREATE INDEX user_email_pattern ON "user" (email text_pattern_ops);
CREATE INDEX user_name_pattern ON "user" (name text_pattern_ops);
CREATE INDEX user_created_at_id ON "user" ("createdAt", id);

-- Down Migration
DROP INDEX user_created_at_id;
DROP INDEX user_name_pattern;
DROP INDEX user_email_pattern;
ALTER TABLE session DROP COLUMN "impersonatedBy";
ALTER TABLE "user" DROP COLUMN "banExpires";
ALTER TABLE "user" DROP COLUMN "banReason";
ALTER TABLE "user" DROP COLUMN banned;
ALTER TABLE "user" DROP COLUMN role;
