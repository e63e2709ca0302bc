-- Up Migration

-- Tamper evidence: every event carries `hash = sha256(previous event's hash || canonical bytes)`, chained in
-- global position order from 32 zero bytes. The append computes it under event_log_head's row lock, the
-- lock that hands out positions, so the chain follows the log's order exactly; the head row keeps the last
-- hash so the append never reads the previous event. Changing, inserting or deleting a stored event breaks
-- the chain at that position (`audit verify`); cutting the tail off is caught against a signed head.
--
-- The canonical bytes are the UTF-8 text of a jsonb array of the event's stored fields. jsonb's text form is
-- fixed for a given value (keys sorted, one spacing), so the bytes depend on what is stored, not on how it
-- was sent.
CREATE FUNCTION portcullis_event_canonical(
  p_position bigint, p_event_id uuid, p_stream_id text, p_stream_version integer, p_type text,
  p_data jsonb, p_metadata jsonb, p_recorded_at timestamptz
) RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT jsonb_build_array(
    p_position, p_event_id::text, p_stream_id, p_stream_version, p_type, p_data, p_metadata,
    -- Microseconds since the epoch: the stored instant, whatever the session's time zone or date style.
    (extract(epoch FROM p_recorded_at) * 1000000)::bigint
  )::text
$$;

ALTER TABLE event_log_head ADD COLUMN hash bytea NOT NULL DEFAULT decode(repeat('00', 32), 'hex');
ALTER TABLE events ADD COLUMN hash bytea;

-- Events appended before the chain existed are chained now, in position order: from here on the whole
-- log verifies from position 1. (What they held before this migration ran is vouched for by nothing.)
-- A chain is sequential, so the hashes are drawn in batches of 10,000 events read in position order (their
-- canonical bytes made by the query), each batch written by one UPDATE: memory stays one batch whatever the
-- log's length. Every row is rewritten, so the secondary indexes are dropped for the fill and built again
-- after it, in one pass each, rather than taking a new entry per row (2.5 times faster at 200,000 events;
-- bench/README.md, group `growth`). This runs in the migrate step's transaction, with no service running.
ALTER TABLE events DISABLE TRIGGER events_append_only;
ALTER TABLE events DROP CONSTRAINT events_event_id_key, DROP CONSTRAINT events_stream_id_stream_version_key;
DROP INDEX events_type_position;
DO $$
DECLARE
  chain bytea := decode(repeat('00', 32), 'hex');
  after_position bigint := 0;
  positions bigint[];
  hashes bytea[];
  r record;
BEGIN
  LOOP
    positions := '{}';
    hashes := '{}';
    FOR r IN
      SELECT position, convert_to(portcullis_event_canonical(
               position, event_id, stream_id, stream_version, type, data, metadata, recorded_at), 'UTF8') AS canonical
      FROM events WHERE position > after_position ORDER BY position LIMIT 10000
    LOOP
      chain := sha256(chain || r.canonical);
      positions := positions || r.position;
      hashes := hashes || chain;
    END LOOP;
    EXIT WHEN cardinality(positions) = 0;
    UPDATE events SET hash = batch.hash
    FROM unnest(positions, hashes) AS batch(position, hash) WHERE events.position = batch.position;
    after_position := positions[cardinality(positions)];
  END LOOP;
  UPDATE event_log_head SET hash = chain;
END $$;
ALTER TABLE events
  ADD CONSTRAINT events_event_id_key UNIQUE (event_id),
  ADD CONSTRAINT events_stream_id_stream_version_key UNIQUE (stream_id, stream_version);
CREATE INDEX events_type_position ON events (type, position);
ALTER TABLE events ENABLE TRIGGER events_append_only;
ALTER TABLE events ALTER COLUMN hash SET NOT NULL;

-- As 1732230000050, with each event's hash drawn under the head's lock (taken FOR UPDATE first, and the
-- head row written once at the end). One recorded_at for the whole append: its events are recorded together.
CREATE OR REPLACE FUNCTION portcullis_append(p_writes jsonb, p_events jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  event_count integer := jsonb_array_length(p_events);
  head bigint;
  chain bytea;
  recorded timestamptz;
  write jsonb;
  expected jsonb;
  actual integer;
  before jsonb := '{}'::jsonb;
  after jsonb;
  r record;
BEGIN
  -- The lock is taken here and held to commit; the head row is written once, at the end.
  SELECT position + event_count, hash INTO head, chain FROM event_log_head FOR UPDATE;
  -- Read once the lock is ours, so recorded_at never goes back as positions go up.
  recorded := clock_timestamp();
  FOR write IN SELECT value FROM jsonb_array_elements(p_writes) LOOP
    SELECT coalesce(max(stream_version), 0) INTO actual FROM events WHERE stream_id = write->>'stream_id';
    expected := write->'expected';
    IF NOT (
      expected = '"any"'::jsonb
      OR (expected = '"no_stream"'::jsonb AND actual = 0)
      OR (expected = '"stream_exists"'::jsonb AND actual > 0)
      OR (jsonb_typeof(expected) = 'number' AND actual = (expected #>> '{}')::integer)
    ) THEN
      RAISE EXCEPTION 'wrong expected version' USING
        ERRCODE = 'PC409',
        DETAIL = jsonb_build_object('streamId', write->>'stream_id', 'actual', actual)::text;
    END IF;
    before := before || jsonb_build_object(write->>'stream_id', actual);
  END LOOP;

  FOR r IN
    SELECT head - event_count + e.ordinality AS position,
           (e.value->>'event_id')::uuid AS event_id,
           e.value->>'stream_id' AS stream_id,
           (before->>(e.value->>'stream_id'))::integer
             + row_number() OVER (PARTITION BY e.value->>'stream_id' ORDER BY e.ordinality) AS stream_version,
           e.value->>'type' AS type,
           e.value->'data' AS data,
           e.value->'metadata' AS metadata
    FROM jsonb_array_elements(p_events) WITH ORDINALITY AS e(value, ordinality)
    ORDER BY e.ordinality
  LOOP
    chain := sha256(chain || convert_to(portcullis_event_canonical(
      r.position, r.event_id, r.stream_id, r.stream_version::integer, r.type, r.data, r.metadata, recorded), 'UTF8'));
    INSERT INTO events (position, event_id, stream_id, stream_version, type, data, metadata, recorded_at, hash)
    VALUES (r.position, r.event_id, r.stream_id, r.stream_version, r.type, r.data, r.metadata, recorded, chain);
  END LOOP;
  UPDATE event_log_head SET position = head, hash = chain;

  SELECT jsonb_object_agg(stream_id, version) INTO after
  FROM (SELECT stream_id, max(stream_version) AS version FROM events
        WHERE position > head - event_count AND position <= head GROUP BY stream_id) AS appended;

  PERFORM pg_notify('portcullis_event_log', head::text);
  RETURN jsonb_build_object('position', head, 'versions', after);
END $$;

-- Down Migration
ALTER TABLE events DROP COLUMN hash;
ALTER TABLE event_log_head DROP COLUMN hash;
DROP FUNCTION portcullis_event_canonical(bigint, uuid, text, integer, text, jsonb, jsonb, timestamptz);
