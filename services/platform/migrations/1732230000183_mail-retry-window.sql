-- Up Migration

-- A mail is retried for a window of time from its first attempt (MAILER_RETRY_WINDOW_SECONDS), not for a
-- number of attempts, and a job whose last attempt found the relay unusable (down, unreachable, closing the
-- session) is made due again the moment another mail goes through, rather than at the end of its backoff.
-- An operator's retry of a dead job clears the first attempt: the job gets a window afresh.
ALTER TABLE mail_delivery
  ADD COLUMN first_attempted_at timestamptz,
  ADD COLUMN waiting_for_relay boolean NOT NULL DEFAULT false;
-- Jobs tried before this step: their window counts from when they arrived, the closest thing known.
UPDATE mail_delivery SET first_attempted_at = received_at WHERE attempts > 0;
-- What the release after a successful delivery looks for, after every mail sent: small, usually empty.
CREATE INDEX mail_delivery_waiting_for_relay ON mail_delivery (next_attempt_at) WHERE status = 'pending' AND waiting_for_relay;

-- Down Migration
DROP INDEX mail_delivery_waiting_for_relay;
ALTER TABLE mail_delivery DROP COLUMN waiting_for_relay, DROP COLUMN first_attempted_at;
