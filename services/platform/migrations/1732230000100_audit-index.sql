-- Up Migration

-- The audit index: one row per event of the log, with what the audit search filters on, so that a filtered
-- page is an index range scan by position however long the log is. The event itself (data, metadata, hash)
-- stays in `events`, joined by position: the index holds no copy of it.
CREATE TABLE audit_event (
  position bigint PRIMARY KEY,
  type text NOT NULL,
  stream_id text NOT NULL,
  -- When the log recorded it (the append's time, taken under the position lock): it rises with the position.
  recorded_at timestamptz NOT NULL,
  actor_kind text NOT NULL,
  actor_id text,
  ip inet
);
-- One ordered read per type: a type prefix is expanded to the types it covers (see audit-search.ts).
CREATE INDEX audit_event_type ON audit_event (type, position);
CREATE INDEX audit_event_stream ON audit_event (stream_id, position);
CREATE INDEX audit_event_actor ON audit_event (actor_id, position) WHERE actor_id IS NOT NULL;
-- A time range is turned into a range of positions through this, then read in position order.
CREATE INDEX audit_event_recorded ON audit_event (recorded_at, position);
CREATE INDEX audit_event_ip ON audit_event USING gist (ip inet_ops) WHERE ip IS NOT NULL;

-- Whom each event concerns: `user:<id>` (the users it names, its actor) and `organization:<id>`.
CREATE TABLE audit_event_subject (
  subject text NOT NULL,
  position bigint NOT NULL,
  PRIMARY KEY (subject, position)
);

-- Down Migration
DROP TABLE audit_event_subject;
DROP TABLE audit_event;
