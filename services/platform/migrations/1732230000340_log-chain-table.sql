-- Up Migration

-- The hash chain of a log that does not chain itself (KurrentDB: see docs/design-notes.md, "The hash chain").
-- The chainer follows the log in position order and writes, per event, `hash = sha256(previous hash ||
-- canonical bytes)` (`chainedEventText`), from 32 zero bytes, with the head in the same transaction: the head is
-- the chainer's checkpoint, so a restart goes on from exactly the last event chained. Positions are the log's
-- own (KurrentDB's commit positions leave gaps), so `events` counts what the chain covers.
CREATE TABLE log_chain (
  position bigint PRIMARY KEY,
  hash bytea NOT NULL
);
CREATE TABLE log_chain_head (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  position bigint NOT NULL,
  hash bytea NOT NULL,
  events bigint NOT NULL
);
INSERT INTO log_chain_head (position, hash, events) VALUES (0, decode(repeat('00', 32), 'hex'), 0);

-- Down Migration
DROP TABLE log_chain_head;
DROP TABLE log_chain;
