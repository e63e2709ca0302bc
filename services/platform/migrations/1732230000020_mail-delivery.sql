-- Up Migration

-- The mailer's delivery log: one row per mail job, keyed by the job id, so a job that arrives twice (the bus
-- delivers at least once) is delivered once. `job` is the job as it arrived; its token is sealed
-- (AES-256-GCM), never in the clear. A job is pending until the transport accepted it (sent), or until its
-- attempts ran out or its link expired (dead: the dead letters, kept and visible through the ops API).
CREATE TABLE mail_delivery (
  job_id uuid PRIMARY KEY,
  kind text NOT NULL,
  user_id text NOT NULL,
  recipient text NOT NULL,
  job jsonb NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'dead')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_error text,
  transport text,
  message_id text,
  smtp_response text,
  received_at timestamptz NOT NULL DEFAULT now(),
  sent_at timestamptz,
  dead_at timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mail_delivery_due ON mail_delivery (next_attempt_at) WHERE status = 'pending';
CREATE INDEX mail_delivery_status ON mail_delivery (status, updated_at DESC);

-- The embedded default's inbox (no SMTP_URL): what would have been sent, one row per job.
CREATE TABLE dev_mailbox (
  id bigserial PRIMARY KEY,
  job_id uuid NOT NULL UNIQUE,
  sender text NOT NULL,
  recipient text NOT NULL,
  subject text NOT NULL,
  text_body text NOT NULL,
  html_body text NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dev_mailbox_recipient ON dev_mailbox (recipient, id DESC);

-- Down Migration
DROP TABLE dev_mailbox;
DROP TABLE mail_delivery;
