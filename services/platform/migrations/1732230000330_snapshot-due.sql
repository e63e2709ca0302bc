-- Up Migration

-- Streams that have grown by another 1,024 events (SNAPSHOT_DUE_EVERY in
-- services/platform/src/command/background-snapshots.ts), for the api's background snapshotter to fold and
-- snapshot, so that the first command on a long stream written without commands (an import, a bulk load)
-- or whose snapshots were dropped does not fold all of it. A row per stream, kept by a trigger that runs
-- only for every 1,024th event of a stream: no scan finds them. `marked_version` is the version that marked
-- it (a row done with is deleted only if no later mark came meanwhile); `claimed_until` is a snapshotter's
-- lease on it, so that api processes share the work and a crashed one's claim runs out.
CREATE TABLE snapshot_due (
  stream_id text PRIMARY KEY,
  marked_version integer NOT NULL,
  claimed_until timestamptz NOT NULL DEFAULT '-infinity'
);

-- The streams already that long, read once here (the one scan of the log this takes), before the trigger
-- exists: creating it locks out appends until this migration commits, and that is then only a moment.
INSERT INTO snapshot_due (stream_id, marked_version)
SELECT stream_id, max(stream_version) FROM events WHERE stream_version % 1024 = 0 GROUP BY stream_id;

CREATE FUNCTION portcullis_mark_snapshot_due() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO snapshot_due (stream_id, marked_version) VALUES (NEW.stream_id, NEW.stream_version)
  ON CONFLICT (stream_id) DO UPDATE SET marked_version = greatest(snapshot_due.marked_version, excluded.marked_version);
  RETURN NULL;
END $$;

-- The condition is checked per row without calling the function: the other 1,023 events cost nothing more.
CREATE TRIGGER events_snapshot_due AFTER INSERT ON events
FOR EACH ROW WHEN (NEW.stream_version % 1024 = 0) EXECUTE FUNCTION portcullis_mark_snapshot_due();

-- Down Migration
DROP TRIGGER events_snapshot_due ON events;
DROP FUNCTION portcullis_mark_snapshot_due();
DROP TABLE snapshot_due;
