-- Up Migration

-- One append in one round trip. The steps are those the adapter used to send one by one inside a
-- transaction: draw positions under event_log_head's row lock (held to commit, so positions become visible
-- in commit order), check each stream's expected version (each statement of a volatile function takes a
-- new snapshot, so the check sees every append committed before the lock was granted), insert, and notify
-- followers at commit. A failed check raises PC409 with the stream and its actual version in DETAIL, and
-- the whole statement rolls back, positions included.
--
-- p_writes: [{"stream_id": text, "expected": "any" | "no_stream" | "stream_exists" | integer}, ...]
-- p_events: [{"event_id": uuid, "stream_id": text, "type": text, "data": jsonb, "metadata": jsonb}, ...]
-- Returns {"position": <last position>, "versions": {<stream_id>: <version after the append>}}.
CREATE FUNCTION portcullis_append(p_writes jsonb, p_events jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  event_count integer := jsonb_array_length(p_events);
  head bigint;
  write jsonb;
  expected jsonb;
  actual integer;
  before jsonb := '{}'::jsonb;
  after jsonb;
BEGIN
  UPDATE event_log_head SET position = position + event_count RETURNING position INTO head;
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

  INSERT INTO events (position, event_id, stream_id, stream_version, type, data, metadata)
  SELECT head - event_count + e.ordinality,
         (e.value->>'event_id')::uuid,
         e.value->>'stream_id',
         (before->>(e.value->>'stream_id'))::integer
           + row_number() OVER (PARTITION BY e.value->>'stream_id' ORDER BY e.ordinality),
         e.value->>'type',
         e.value->'data',
         e.value->'metadata'
  FROM jsonb_array_elements(p_events) WITH ORDINALITY AS e(value, ordinality);

  SELECT jsonb_object_agg(stream_id, version) INTO after
  FROM (SELECT stream_id, max(stream_version) AS version FROM events
        WHERE position > head - event_count AND position <= head GROUP BY stream_id) AS appended;

  PERFORM pg_notify('portcullis_event_log', head::text);
  RETURN jsonb_build_object('position', head, 'versions', after);
END $$;

-- Down Migration
DROP FUNCTION portcullis_append(jsonb, jsonb);
