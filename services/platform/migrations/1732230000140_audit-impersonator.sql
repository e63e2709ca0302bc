-- Up Migration

-- Who really did it: the admin behind an impersonation session, beside the user the session was of
-- (`actor_id`). The audit search's `actor` filter finds an event by either, so a search by the real admin's id
-- finds what they did while impersonating.
ALTER TABLE audit_event ADD COLUMN impersonator_id text;
CREATE INDEX audit_event_impersonator ON audit_event (impersonator_id, position) WHERE impersonator_id IS NOT NULL;

-- Events indexed before this: an admin's command sent from an impersonation session was recorded as the
-- impersonated admin acting (`kind: admin`), the real admin only in the metadata's `impersonatedBy`. They read
-- as impersonations now (`actorOf`), and the index says so too: kind, impersonator, and the admin as a subject.
WITH impersonated AS (
  SELECT e.position,
         coalesce(nullif(e.metadata->'actor'->>'impersonatorId', ''), nullif(e.metadata->>'impersonatedBy', '')) AS impersonator_id
  FROM events e
  WHERE coalesce(nullif(e.metadata->'actor'->>'impersonatorId', ''), nullif(e.metadata->>'impersonatedBy', '')) IS NOT NULL
),
updated AS (
  UPDATE audit_event a SET impersonator_id = i.impersonator_id, actor_kind = 'impersonator'
  FROM impersonated i
  WHERE a.position = i.position
  RETURNING a.position, a.impersonator_id
)
INSERT INTO audit_event_subject (subject, position)
SELECT 'user:' || impersonator_id, position FROM updated
ON CONFLICT DO NOTHING;

-- Down Migration
DROP INDEX audit_event_impersonator;
ALTER TABLE audit_event DROP COLUMN impersonator_id;
