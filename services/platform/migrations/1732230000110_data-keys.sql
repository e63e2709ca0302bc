-- Up Migration

-- Per-subject data keys for personal data in events (crypto-shredding, see personal-data.ts). A subject is
-- `u:<userId>` or `a:<keyed hash of an address>`. `wrapped_key` is the 256-bit data key sealed with a key
-- derived from AUTH_SECRET; erasing a user sets it to NULL and keeps the row, so no later append can give the
-- erased user a fresh key. An address's row is deleted instead: a new account at that address starts anew.
-- Mutable on purpose: the log is append-only and hash-chained, this table is what forgetting destroys.
CREATE TABLE data_key (
  subject_id text PRIMARY KEY,
  wrapped_key bytea,
  created_at timestamptz NOT NULL DEFAULT now(),
  erased_at timestamptz
);

-- One-off upgrades of the log that need what SQL does not have (AUTH_SECRET), each done once by the first
-- api to start (see address-streams.ts). A log with no address-named stream yet has nothing to carry.
CREATE TABLE log_upgrade (
  name text PRIMARY KEY,
  done_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO log_upgrade (name)
SELECT 'address-streams-keyed'
WHERE NOT EXISTS (SELECT 1 FROM events WHERE stream_id LIKE 'email-%' OR stream_id LIKE 'username-%');

-- Down Migration
DROP TABLE log_upgrade;
DROP TABLE data_key;
