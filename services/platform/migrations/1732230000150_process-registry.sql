-- Up Migration

-- Every running api, projector and mailer process, as it last said: each upserts its row every few seconds
-- (heartbeat), so the ops overview can show the health of every process, where to scrape its figures, and
-- which projections a projector holds. A row not seen for a while is a process that is down; rows long
-- unseen are removed by the processes themselves. Not history: nothing here is audited or rebuilt.
CREATE TABLE process_registry (
  instance_id text PRIMARY KEY,
  service text NOT NULL CHECK (service IN ('api', 'projector', 'mailer')),
  host text NOT NULL,
  pid integer NOT NULL,
  started_at timestamptz NOT NULL,
  seen_at timestamptz NOT NULL,
  metrics_url text,
  projections text[] NOT NULL DEFAULT '{}'
);
CREATE INDEX process_registry_seen ON process_registry (seen_at);

-- Down Migration
DROP TABLE process_registry;
