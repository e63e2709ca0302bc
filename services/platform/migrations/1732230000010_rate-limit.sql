-- Up Migration

-- Rate-limit counters when there is no Redis: one row per client and path, shared by every api replica.
-- A fixed window per key: `count` requests since the window opened, which closes at `window_ends_at`.
-- Not a projection and not history: rows are counters, pruned once their window has closed.
CREATE TABLE rate_limit (
  key text PRIMARY KEY,
  count integer NOT NULL,
  window_ends_at timestamptz NOT NULL
);
CREATE INDEX rate_limit_window_ends_at ON rate_limit (window_ends_at);

-- Down Migration
DROP TABLE rate_limit;
