-- Up Migration

-- As 1732230000121, and the notice also says how many other appends its writer has coming soon (an api's
-- commands whose passwords are being checked or hashed): a follower woken by it may wait for those, in one
-- batch, as Postgres' commit_delay waits only while commit_siblings are active. The count defaults to 0, so
-- a caller of the two-argument form (an api not yet upgraded) still appends through this function.
DROP FUNCTION portcullis_append(jsonb, jsonb);

CREATE FUNCTION portcullis_append(p_writes jsonb, p_events jsonb, p_under_way integer DEFAULT 0) RETURNS jsonb
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
  -- The events as the notice's text, while they fit; NULL once they do not.
  notified_events text := '';
  notice text;
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
    -- Grown as text and dropped once too long: rebuilding a jsonb array per event costs the square of the
    -- append's size (a 1,200-event append spent seconds on it).
    IF notified_events IS NOT NULL THEN
      notified_events := notified_events || CASE WHEN notified_events = '' THEN '' ELSE ',' END || jsonb_build_array(
        r.position, r.event_id, r.stream_id, r.stream_version, r.type, r.data, r.metadata)::text;
      IF octet_length(notified_events) >= 7900 THEN notified_events := NULL; END IF;
    END IF;
  END LOOP;
  UPDATE event_log_head SET position = head, hash = chain;

  SELECT jsonb_object_agg(stream_id, version) INTO after
  FROM (SELECT stream_id, max(stream_version) AS version FROM events
        WHERE position > head - event_count AND position <= head GROUP BY stream_id) AS appended;

  -- The notice carries the events when they fit (NOTIFY takes under 8000 bytes), so a follower that has
  -- applied everything before them need not read them back: '<head> <json>', or '<head>' alone.
  notice := head::text || ' {"recordedAtUs": ' || (extract(epoch FROM recorded) * 1000000)::bigint::text
    || ', "underWay": ' || greatest(p_under_way, 0)::text || ', "events": [' || notified_events || ']}';
  IF notice IS NULL OR octet_length(notice) >= 7900 THEN notice := head::text; END IF;
  PERFORM pg_notify('portcullis_event_log', notice);
  RETURN jsonb_build_object('position', head, 'versions', after);
END $$;


-- Down Migration
-- 1732230000121's function is the one to restore by hand (DROP this one first); its notices say no count.
