-- Up Migration

-- better-auth's username plugin columns on the user read model: username (lower-cased) and the display form.
-- Uniqueness is the decider's (the `username-<username>` reservation streams); the index serves lookups.
ALTER TABLE "user" ADD COLUMN username text;
ALTER TABLE "user" ADD COLUMN "displayUsername" text;
CREATE INDEX user_username ON "user" (username);

-- Down Migration
DROP INDEX user_username;
ALTER TABLE "user" DROP COLUMN "displayUsername";
ALTER TABLE "user" DROP COLUMN username;
