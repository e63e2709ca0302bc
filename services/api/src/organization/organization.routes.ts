import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  creatorRole,
  DomainError,
  fullOrganizationEndpoints,
  organizationEndpoints,
  parseRoleList,
  rolesGrant,
  type CreateOrganizationAnswer,
  type FullOrganization,
  type Organization,
} from '@portcullis/contracts';
import { readAccount } from '../identity/account-model.ts';
import type { OrganizationPorts } from './ports.ts';
import { requestMetadataOf } from '../http/request-context.ts';
import { serverCall } from '../http/server-call.ts';
import { route } from '../http/declared-route.ts';
import { requireSession, resolveSession, type CurrentSession } from '../session/current-session.ts';
import { clearActiveOrganizationIf } from './active-organization.ts';
import { listOrganizationInvitations } from './invitation-queries.ts';
import { memberAnswer, organizationAnswer } from './organization-answers.ts';
import { setActiveSelection, switchedSession } from './organization-model.ts';
import { createOrganization } from './create-organization.command.ts';
import { updateOrganization } from './update-organization.command.ts';
import { deleteOrganization } from './delete-organization.command.ts';
import {
  findMemberWithUser,
  findOrganizationById,
  findOrganizationBySlug,
  listMembers,
  listUserOrganizations,
} from './organization-queries.ts';
import { slugHolder } from './slug-reservation.ts';
import { listOrganizationTeams } from './team-queries.ts';

/** Who creates an organization: the signed-in user, or the user a server call names. */
interface Creator {
  readonly userId: string;
  readonly session: CurrentSession | null;
  readonly byServer: boolean;
}

/**
 * better-auth takes `userId` only from server-side calls without a session; over HTTP that is a call with
 * AUTH_SERVER_API_KEY. Anyone else creates for themself, whatever `userId` they send.
 */
async function resolveCreator(ctx: OrganizationPorts, request: FastifyRequest, reply: FastifyReply, userId: string | undefined): Promise<Creator> {
  const call = serverCall(ctx, request);
  if (call === 'refused') throw new DomainError('UNAUTHORIZED');
  const session = await resolveSession(ctx, request, reply, { refresh: false });
  if (session) return { userId: session.user.id, session, byServer: false };
  if (call !== 'accepted' || !userId) throw new DomainError('UNAUTHORIZED');
  if ((await readAccount(ctx, userId)).status !== 'active') throw new DomainError('UNAUTHORIZED');
  return { userId, session: null, byServer: true };
}

/** A switch refused because the caller is not a member: `refuseNonMember` answers it, once the switch is off. */
class NotAMember extends Error {}

/**
 * A read of an organization the caller turns out not to belong to: better-auth clears it as the session's
 * active organization (it may be the stale one) and refuses with 403.
 */
async function refuseNonMember(ctx: OrganizationPorts, request: FastifyRequest, reply: FastifyReply, current: CurrentSession): Promise<never> {
  if (current.session.activeOrganizationId !== null) {
    await setActiveSelection(ctx, request, reply, current, { activeOrganizationId: null, activeTeamId: null });
  }
  throw new DomainError('USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION', { status: 403 });
}

const endpoints = { ...organizationEndpoints, ...fullOrganizationEndpoints };

/** better-auth's organization endpoints (`routes/crud-org.ts`) and has-permission. */
export function organizationCoreRoutes(ctx: OrganizationPorts) {
  const options = ctx.config.organization;
  return async function register(app: FastifyInstance): Promise<void> {
    route(app, endpoints.createOrganization, async (request, reply): Promise<CreateOrganizationAnswer> => {
      const { body } = request;
      const creator = await resolveCreator(ctx, request, reply, body.userId);
      const switching = creator.session && !body.keepCurrentActiveOrganization ? creator.session : null;
      const { organization, selection } = await createOrganization(ctx, requestMetadataOf(request), {
        name: body.name,
        slug: body.slug,
        logo: body.logo ?? null,
        metadata: body.metadata,
        creatorUserId: creator.userId,
        byServer: creator.byServer,
        switching,
      });
      if (switching) switchedSession(ctx, request, reply, switching, selection);
      const members = [...organization.members.values()].map((member) => memberAnswer(organization.id, member));
      return { ...organizationAnswer(organization), members };
    });

    route(app, endpoints.checkSlug, async (request, reply) => {
      const { body } = request;
      if (serverCall(ctx, request) !== 'accepted') await requireSession(ctx, request, reply);
      if ((await slugHolder(ctx, body.slug)) !== null) throw new DomainError('ORGANIZATION_SLUG_ALREADY_TAKEN');
      return { status: true };
    });

    route(app, endpoints.updateOrganization, async (request, reply): Promise<Organization> => {
      const { body } = request;
      const current = await requireSession(ctx, request, reply);
      const organizationId = body.organizationId || current.session.activeOrganizationId;
      if (!organizationId) throw new DomainError('ORGANIZATION_NOT_FOUND');
      const updated = await updateOrganization(ctx, requestMetadataOf(request), { organizationId, actorUserId: current.user.id, changes: body.data });
      return organizationAnswer(updated);
    });

    route(app, endpoints.deleteOrganization, async (request, reply): Promise<Organization> => {
      if (options.disableDeletion) throw new DomainError('ORGANIZATION_DELETION_DISABLED');
      const { body } = request;
      const current = await requireSession(ctx, request, reply);
      const organizationId = body.organizationId;
      if (!organizationId) throw new DomainError('ORGANIZATION_NOT_FOUND');
      const deleted = await deleteOrganization(ctx, requestMetadataOf(request), { organizationId, actorUserId: current.user.id });
      await clearActiveOrganizationIf(ctx, request, reply, current, organizationId);
      return organizationAnswer(deleted);
    });

    route(app, endpoints.listOrganizations, async (request, reply): Promise<Organization[]> => {
      const current = await requireSession(ctx, request, reply);
      return listUserOrganizations(ctx, current.user.id);
    });

    route(app, endpoints.setActiveOrganization, async (request, reply): Promise<Organization | null> => {
      const { body } = request;
      const current = await requireSession(ctx, request, reply);
      const active = current.session.activeOrganizationId;
      if (body.organizationId === null) {
        if (active !== null) await setActiveSelection(ctx, request, reply, current, { activeOrganizationId: null, activeTeamId: null });
        return null;
      }
      // Empty values count as absent, as better-auth tests them for truth.
      let organizationId = body.organizationId || null;
      if (organizationId === null && !body.organizationSlug) {
        if (active === null) return null;
        organizationId = active;
      }
      if (organizationId === null) {
        const bySlug = await findOrganizationBySlug(ctx, body.organizationSlug!);
        if (!bySlug) throw new DomainError('ORGANIZATION_NOT_FOUND');
        organizationId = bySlug.id;
      }
      // A switch is the busiest organization write: the membership and the organization are read at once,
      // and beside the session's load (see setActiveSelection), not before it.
      const checked = Promise.all([findMemberWithUser(ctx, organizationId, current.user.id), findOrganizationById(ctx, organizationId)]).then(
        ([member, organization]) => {
          if (!member) throw new NotAMember();
          if (!organization) throw new DomainError('ORGANIZATION_NOT_FOUND');
          return organization;
        },
      );
      // Its refusal, if it comes, is met where the switch awaits it, which may be after it has come.
      checked.catch(() => {});
      // A team belongs to one organization: switching organization leaves no team of the old one active.
      const activeTeamId = organizationId === active ? current.session.activeTeamId : null;
      try {
        await setActiveSelection(ctx, request, reply, current, { activeOrganizationId: organizationId, activeTeamId }, checked);
      } catch (error) {
        if (error instanceof NotAMember) await refuseNonMember(ctx, request, reply, current);
        throw error;
      }
      return checked;
    });

    route(app, endpoints.getOrganization, async (request, reply): Promise<Organization | null> => {
      const { query } = request;
      const current = await requireSession(ctx, request, reply);
      const organization = await findRequestedOrganization(ctx, current, query);
      if (organization === undefined) return null;
      if (!(await findMemberWithUser(ctx, organization.id, current.user.id))) await refuseNonMember(ctx, request, reply, current);
      return organization;
    });

    route(app, endpoints.getFullOrganization, async (request, reply): Promise<FullOrganization | null> => {
      const { query } = request;
      const current = await requireSession(ctx, request, reply);
      const organization = await findRequestedOrganization(ctx, current, query);
      if (organization === undefined) return null;
      const caller = await findMemberWithUser(ctx, organization.id, current.user.id);
      if (!caller) return refuseNonMember(ctx, request, reply, current);
      const [members, invitations, teams] = await Promise.all([
        listMembers(ctx, organization.id, { limit: query.membersLimit ?? options.membershipLimit, offset: 0 }),
        listOrganizationInvitations(ctx, organization.id),
        options.teams.enabled ? listOrganizationTeams(ctx, organization.id) : Promise.resolve(undefined),
      ]);
      // Invitation ids work as invitation links: only members who could mint one see them, and invitations
      // to the creator role only its holders (better-auth's canViewInvitations and withoutCreatorRoleInvitations).
      const callerIsCreator = parseRoleList(caller.role).includes(creatorRole);
      const visible = rolesGrant(caller.role, { invitation: ['create'] })
        ? invitations.filter((invitation) => callerIsCreator || !parseRoleList(invitation.role).includes(creatorRole))
        : [];
      return { ...organization, members: members.members, invitations: visible, ...(teams ? { teams } : {}) };
    });

    route(app, endpoints.hasPermission, async (request, reply) => {
      const { body } = request;
      const current = await requireSession(ctx, request, reply);
      const organizationId = body.organizationId || current.session.activeOrganizationId;
      if (!organizationId) throw new DomainError('NO_ACTIVE_ORGANIZATION');
      const member = await findMemberWithUser(ctx, organizationId, current.user.id);
      if (!member) throw new DomainError('USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION', { status: 401 });
      const permissions = body.permissions ?? body.permission ?? {};
      return { error: null, success: rolesGrant(member.role, permissions) };
    });
  };
}

/**
 * The organization a get asks for: by slug, else by id, else the session's active one. `undefined` when
 * none is asked for and none is active (better-auth answers null then).
 */
async function findRequestedOrganization(
  ctx: OrganizationPorts,
  current: CurrentSession,
  query: { organizationId?: string | undefined; organizationSlug?: string | undefined },
): Promise<Organization | undefined> {
  const key = query.organizationSlug || query.organizationId || current.session.activeOrganizationId;
  if (!key) return undefined;
  const organization = query.organizationSlug ? await findOrganizationBySlug(ctx, key) : await findOrganizationById(ctx, key);
  if (!organization) throw new DomainError('ORGANIZATION_NOT_FOUND');
  return organization;
}
