import { z } from 'zod';
import { baseUrlOf } from './core.ts';
import { flag, lifetime, section, setting } from './settings.ts';

/** better-auth's organization plugin options, with teams switched on. */
export const organizationSettings = section(
  'Organizations',
  {
    AUTH_ORGANIZATION_ALLOW_CREATE: setting(flag(true), 'users may create organizations (a server call with `userId` always may)'),
    AUTH_ORGANIZATION_LIMIT: setting(z.coerce.number().int().min(1).optional(), 'organizations a user may belong to and still create another'),
    AUTH_ORGANIZATION_MEMBERSHIP_LIMIT: setting(z.coerce.number().int().min(1).default(100), 'members per organization'),
    AUTH_ORGANIZATION_INVITATION_EXPIRES_IN: setting(lifetime(172_800), 'invitation lifetime, seconds'),
    AUTH_ORGANIZATION_INVITATION_LIMIT: setting(z.coerce.number().int().min(1).default(100), 'pending invitations per organization'),
    AUTH_ORGANIZATION_INVITATION_URL: setting(
      z
        .string()
        .regex(/^https?:\/\/.*\{id\}/, 'must be an http(s) URL containing {id}')
        .optional(),
      'the link in invitation mail (`{id}`: the invitation id)',
      '`$BASE_URL/accept-invitation/{id}`',
    ),
    AUTH_ORGANIZATION_REQUIRE_EMAIL_VERIFICATION_ON_INVITATION: setting(flag(false), 'only verified emails may see, accept or reject invitations'),
    AUTH_ORGANIZATION_DISABLE_DELETION: setting(flag(false), '`organization/delete` answers 404'),
    AUTH_ORGANIZATION_TEAMS_ENABLED: setting(flag(true), 'teams'),
    AUTH_ORGANIZATION_DEFAULT_TEAM: setting(flag(true), 'a new organization gets a team of its name holding its creator'),
    AUTH_ORGANIZATION_MAXIMUM_TEAMS: setting(z.coerce.number().int().min(1).optional(), 'teams per organization'),
    AUTH_ORGANIZATION_MAXIMUM_MEMBERS_PER_TEAM: setting(z.coerce.number().int().min(1).optional(), 'members per team'),
    AUTH_ORGANIZATION_ALLOW_REMOVING_ALL_TEAMS: setting(flag(false), 'the last team of an organization may be removed'),
  },
  (c, core) => ({
    organization: {
      allowCreate: c.AUTH_ORGANIZATION_ALLOW_CREATE,
      /** Organizations one user may belong to when creating another; null: no limit. */
      organizationLimit: c.AUTH_ORGANIZATION_LIMIT ?? null,
      membershipLimit: c.AUTH_ORGANIZATION_MEMBERSHIP_LIMIT,
      invitationExpiresInSeconds: c.AUTH_ORGANIZATION_INVITATION_EXPIRES_IN,
      /** Pending invitations one organization may hold. */
      invitationLimit: c.AUTH_ORGANIZATION_INVITATION_LIMIT,
      /** The link an invitation mail carries; `{id}` is replaced by the invitation id. */
      invitationUrl: c.AUTH_ORGANIZATION_INVITATION_URL ?? `${baseUrlOf(core)}/accept-invitation/{id}`,
      requireEmailVerificationOnInvitation: c.AUTH_ORGANIZATION_REQUIRE_EMAIL_VERIFICATION_ON_INVITATION,
      disableDeletion: c.AUTH_ORGANIZATION_DISABLE_DELETION,
      teams: {
        enabled: c.AUTH_ORGANIZATION_TEAMS_ENABLED,
        /** A new organization gets a team of its own name, holding its creator. */
        defaultTeam: c.AUTH_ORGANIZATION_DEFAULT_TEAM,
        maximumTeams: c.AUTH_ORGANIZATION_MAXIMUM_TEAMS ?? null,
        maximumMembersPerTeam: c.AUTH_ORGANIZATION_MAXIMUM_MEMBERS_PER_TEAM ?? null,
        allowRemovingAllTeams: c.AUTH_ORGANIZATION_ALLOW_REMOVING_ALL_TEAMS,
      },
    },
  }),
);
