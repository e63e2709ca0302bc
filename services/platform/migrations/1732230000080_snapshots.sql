-- Up Migration

-- Folded states of streams, kept beside the log so that loading a stream costs a snapshot and the events
-- after it, however long the stream has grown. `model` names the fold and its revision: a state folded by
-- other code is never read as this code's. A snapshot is only ever a cache of the log: deleting any or all
-- of them is always safe.
CREATE TABLE snapshots (
  stream_id text NOT NULL,
  model text NOT NULL,
  version integer NOT NULL CHECK (version >= 1),
  state jsonb NOT NULL,
  taken_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (stream_id, model)
);

-- Down Migration
DROP TABLE snapshots;
