-- Up Migration

-- better-auth's organization plugin tables and session columns. Projections of the log like every read
-- model: the organization stream's decider owns uniqueness, limits and the last-owner rule.
ALTER TABLE session ADD COLUMN "activeOrganizationId" text;
ALTER TABLE session ADD COLUMN "activeTeamId" text;
CREATE INDEX session_active_organization ON session ("activeOrganizationId") WHERE "activeOrganizationId" IS NOT NULL;
CREATE INDEX session_active_team ON session ("activeTeamId") WHERE "activeTeamId" IS NOT NULL;

CREATE TABLE organization (
  id text PRIMARY KEY,
  name text NOT NULL,
  slug text NOT NULL UNIQUE,
  logo text,
  -- A record of string to any, stored as its JSON text (better-auth stores it so).
  metadata text,
  "createdAt" timestamptz NOT NULL
);

CREATE TABLE member (
  id text PRIMARY KEY,
  "organizationId" text NOT NULL,
  "userId" text NOT NULL,
  role text NOT NULL,
  "teamId" text,
  "createdAt" timestamptz NOT NULL,
  UNIQUE ("organizationId", "userId")
);
CREATE INDEX member_user_id ON member ("userId");

CREATE TABLE invitation (
  id text PRIMARY KEY,
  "organizationId" text NOT NULL,
  email text NOT NULL,
  role text NOT NULL,
  status text NOT NULL,
  "teamId" text,
  "inviterId" text NOT NULL,
  "expiresAt" timestamptz NOT NULL,
  "createdAt" timestamptz NOT NULL
);
CREATE INDEX invitation_organization_id ON invitation ("organizationId");
CREATE INDEX invitation_email ON invitation (email);

CREATE TABLE team (
  id text PRIMARY KEY,
  name text NOT NULL,
  "organizationId" text NOT NULL,
  "createdAt" timestamptz NOT NULL,
  "updatedAt" timestamptz
);
CREATE INDEX team_organization_id ON team ("organizationId");

CREATE TABLE "teamMember" (
  id text PRIMARY KEY,
  "teamId" text NOT NULL,
  "userId" text NOT NULL,
  "createdAt" timestamptz NOT NULL,
  UNIQUE ("teamId", "userId")
);
CREATE INDEX team_member_user_id ON "teamMember" ("userId");

-- Down Migration
DROP TABLE "teamMember";
DROP TABLE team;
DROP TABLE invitation;
DROP TABLE member;
DROP TABLE organization;
DROP INDEX session_active_team;
DROP INDEX session_active_organization;
ALTER TABLE session DROP COLUMN "activeTeamId";
ALTER TABLE session DROP COLUMN "activeOrganizationId";
