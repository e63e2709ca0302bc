-- Up Migration

-- A Postgres projection's checkpoint move: a compare-and-set from the position its batch was read from, and
-- the notice to api processes waiting to read their own writes, sent when the transaction commits. A
-- checkpoint that has moved away (a holder that lost its lock and died with a COMMIT in flight, a rebuild)
-- raises PC412, which aborts the statement and the transaction it runs in, with every row the batch wrote.
-- Being one function call, it can share a statement with a batch's one write: one round trip, no BEGIN.
-- A NULL channel sends no notice: a deployment with Redis announces checkpoints there, after the commit,
-- so that api processes need not LISTEN (each NOTIFY wakes every listening backend of the database).
CREATE FUNCTION portcullis_move_checkpoint(p_name text, p_from bigint, p_to bigint, p_channel text, p_notice text)
RETURNS void LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  UPDATE projection_checkpoints SET position = p_to, updated_at = now() WHERE name = p_name AND position = p_from;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'checkpoint of % moved away from %', p_name, p_from USING ERRCODE = 'PC412';
  END IF;
  IF p_channel IS NOT NULL THEN
    PERFORM pg_notify(p_channel, p_notice);
  END IF;
END $$;

-- Down Migration
DROP FUNCTION portcullis_move_checkpoint(text, bigint, bigint, text, text);
