-- What each api process counted per minute (sign-ins, refusals, get-session and its latency histogram), so
-- the ops console's overview shows the whole deployment, not the one process that answers it. Each process
-- writes its own rows (absolute figures per minute: a repeated write changes nothing); rows older than the
-- overview's hour are swept.
CREATE TABLE api_minute_figures (
  minute timestamptz NOT NULL,
  instance_id text NOT NULL,
  sign_in_success bigint NOT NULL,
  sign_in_failure bigint NOT NULL,
  sign_in_locked bigint NOT NULL,
  sign_ups bigint NOT NULL,
  rate_limited bigint NOT NULL,
  captcha_refused bigint NOT NULL,
  get_sessions bigint NOT NULL,
  -- get-session's latency histogram this minute: bucket counts and their upper boundaries (seconds).
  get_session_buckets bigint[] NOT NULL,
  bucket_boundaries float8[] NOT NULL,
  PRIMARY KEY (minute, instance_id)
);
