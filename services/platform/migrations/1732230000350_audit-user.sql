-- Up Migration

-- The user an event's data names as its user (`data.userId`) and the event's decision time (its metadata's
-- `occurredAt`): the security view counts failed sign-ins by account and dates each user's last sign-in by
-- them. It read the log's table for them; a log kept elsewhere (KurrentDB) leaves that table empty, so the
-- index holds them, as it holds the rest of what the audit search reads.
ALTER TABLE audit_event ADD COLUMN user_id text, ADD COLUMN occurred_at timestamptz;

-- Events indexed before this, from the log's table. A log kept in KurrentDB has none there: its index gets
-- the columns by `audit rebuild`.
UPDATE audit_event a SET user_id = e.data->>'userId', occurred_at = (e.metadata->>'occurredAt')::timestamptz
FROM events e
WHERE e.position = a.position;

-- Down Migration
ALTER TABLE audit_event DROP COLUMN user_id, DROP COLUMN occurred_at;
