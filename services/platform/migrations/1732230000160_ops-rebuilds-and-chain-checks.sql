-- Up Migration

-- Rebuilds asked for over HTTP (POST /ops/projections/:name/rebuild): the api records the request and
-- notifies; a projector process claims it under the rebuild's advisory lock, runs it and writes its progress
-- here. A claim whose process died leaves the row running with its lock free: the next projector takes it over.
CREATE TABLE projection_rebuilds (
  id uuid PRIMARY KEY,
  projection text NOT NULL,
  status text NOT NULL DEFAULT 'requested' CHECK (status IN ('requested', 'running', 'succeeded', 'failed')),
  requested_at timestamptz NOT NULL DEFAULT now(),
  requested_by text,
  started_at timestamptz,
  finished_at timestamptz,
  position bigint NOT NULL DEFAULT 0,
  head bigint,
  worker text,
  progressed_at timestamptz,
  error text
);
-- One rebuild of a projection under way at a time: a second request answers the first.
CREATE UNIQUE INDEX projection_rebuilds_one_under_way ON projection_rebuilds (projection) WHERE status IN ('requested', 'running');
CREATE INDEX projection_rebuilds_latest ON projection_rebuilds (projection, requested_at DESC);

-- Each check of the log's hash chain (POST /ops/audit/verify, `npm run audit -- verify`): when, by what,
-- how far it got and what it found.
CREATE TABLE chain_verifications (
  id uuid PRIMARY KEY,
  source text NOT NULL CHECK (source IN ('api', 'cli')),
  status text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'intact', 'broken', 'failed')),
  started_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  progressed_at timestamptz NOT NULL DEFAULT now(),
  checked bigint NOT NULL DEFAULT 0,
  verified_to bigint NOT NULL DEFAULT 0,
  head bigint,
  failure_position bigint,
  failure_problem text,
  error text
);
CREATE INDEX chain_verifications_started ON chain_verifications (started_at DESC);
-- One check under way at a time, across processes. A check writes its progress at least every few seconds;
-- one that stopped doing so died with its process and is marked failed before the next one starts.
CREATE UNIQUE INDEX chain_verifications_one_running ON chain_verifications ((true)) WHERE status = 'running';

-- The mail queue's "sent in the last 24 hours" (GET /ops/mail/queue), without reading every mail ever sent.
CREATE INDEX mail_delivery_sent_at ON mail_delivery (sent_at) WHERE status = 'sent';

-- Down Migration
DROP INDEX mail_delivery_sent_at;
DROP TABLE chain_verifications;
DROP TABLE projection_rebuilds;
