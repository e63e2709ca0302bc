-- Up Migration

-- The log's identity, written once when the log is created. Caches built from the log (the Redis session
-- cache) carry it in their keys, so a cache left by another log, or by another database, is never read as
-- this log's. A restored (older) copy keeps the id; it is told apart by the event at the cache's checkpoint.
CREATE TABLE event_log_identity (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO event_log_identity DEFAULT VALUES;

-- Down Migration
DROP TABLE event_log_identity;
