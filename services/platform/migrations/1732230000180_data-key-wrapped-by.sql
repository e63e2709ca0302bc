-- Up Migration

-- Which key-encryption key wrapped each data key (a short hash of the key derived from one secret of the
-- AUTH_SECRETS ring, see personal-data-cipher.ts), so a key is opened by the right secret of the ring and
-- `keys rotate` finds those not yet under the newest. NULL for a key stored before this: it is opened by
-- trying the ring's secrets, and `keys rotate` records it.
ALTER TABLE data_key ADD COLUMN wrapped_by text;

-- Down Migration
ALTER TABLE data_key DROP COLUMN wrapped_by;
