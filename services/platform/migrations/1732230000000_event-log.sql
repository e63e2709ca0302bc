-- Up Migration

-- The append-only event log. `position` is global and gap-free, and is handed out under the row lock on
-- event_log_head, which is held until commit: positions therefore become visible in commit order, and a
-- subscriber reading `position > checkpoint` can never skip an event that commits late.
CREATE TABLE event_log_head (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  position bigint NOT NULL
);
INSERT INTO event_log_head (singleton, position) VALUES (true, 0);

CREATE TABLE events (
  position bigint PRIMARY KEY,
  event_id uuid NOT NULL UNIQUE,
  stream_id text NOT NULL,
  stream_version integer NOT NULL CHECK (stream_version >= 1),
  type text NOT NULL,
  data jsonb NOT NULL,
  metadata jsonb NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (stream_id, stream_version)
);
CREATE INDEX events_type_position ON events (type, position);

-- Append-only: the log is history, and history is not edited.
CREATE FUNCTION events_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the event log is append-only';
END $$;
CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events
  FOR EACH ROW EXECUTE FUNCTION events_refuse_change();

CREATE TABLE projection_checkpoints (
  name text PRIMARY KEY,
  position bigint NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE projection_checkpoints;
DROP TABLE events;
DROP FUNCTION events_refuse_change();
DROP TABLE event_log_head;
