import { streams } from '@portcullis/contracts';
import { generateId, type RequestMetadata } from '@portcullis/platform';
import type { CurrentSession } from '../session/current-session.ts';
import { membershipIndexModel } from './membership-index.decider.ts';
import { foldDecided } from './organization-answers.ts';
import { decideOrganization, type CreateOrganization } from './organization.decider.ts';
import { prepareSwitch, runOrganizationCommand, type ActiveSelection } from './organization-model.ts';
import type { ActiveOrganization } from './organization.state.ts';
import type { OrganizationPorts } from './ports.ts';
import { claimSlug } from './slug-reservation.ts';

/** What the caller asks for; the ids, the count of the creator's memberships and the policy come from here. */
type CreateOrganizationRequest = Pick<CreateOrganization, 'name' | 'slug' | 'logo' | 'metadata' | 'creatorUserId' | 'byServer'> & {
  /** The creator's session, when it moves to the new organization in the same append. */
  readonly switching: CurrentSession | null;
};

export interface CreatedOrganization {
  readonly organization: ActiveOrganization;
  /** The selection the switching session now holds. */
  readonly selection: ActiveSelection;
}

/**
 * create-organization: the organization, its creator as owner, its slug reserved, and (teams and
 * defaultTeam on) its default team, in one append. The creator's session works in it from that append on,
 * as better-auth sets it active.
 */
export async function createOrganization(
  ports: Pick<OrganizationPorts, 'commands' | 'config'>,
  request: RequestMetadata,
  command: CreateOrganizationRequest,
): Promise<CreatedOrganization> {
  const options = ports.config.organization;
  const organizationId = generateId();
  const memberId = generateId();
  const defaultTeam = options.teams.enabled && options.teams.defaultTeam ? { teamId: generateId(), teamMemberId: generateId() } : null;
  const selection = { activeOrganizationId: organizationId, activeTeamId: defaultTeam?.teamId ?? null };
  const { switching, creatorUserId } = command;
  const organization = await runOrganizationCommand(
    ports,
    { name: 'organization.create', request, organizationId, actorId: creatorUserId },
    async (loaded, unit) => {
      // Counted on the creator's index on the log, which the append requires unchanged: of many creates at
      // once, only as many as the limit allows can land.
      const [creatorIndex, alsoAppend] = await Promise.all([
        unit.load(streams.userOrganizations(creatorUserId), membershipIndexModel),
        switching ? prepareSwitch(unit, switching, selection) : null,
      ]);
      const events = decideOrganization(
        {
          type: 'create',
          organizationId,
          name: command.name,
          slug: command.slug,
          logo: command.logo,
          metadata: command.metadata,
          creatorUserId,
          memberId,
          defaultTeam,
          byServer: command.byServer,
          creatorMemberships: creatorIndex.state.organizationIds.length,
          policy: { allowCreate: options.allowCreate, organizationLimit: options.organizationLimit },
        },
        loaded.state,
      );
      // After the creation rules, as better-auth: a caller who may not create learns nothing of the slug.
      await claimSlug(unit, { slug: command.slug, organizationId, refusal: 'ORGANIZATION_ALREADY_EXISTS' });
      return { events, result: foldDecided(loaded.state, events, unit.now), alsoAppend };
    },
  );
  return { organization, selection };
}
