import type { FastifyInstance } from 'fastify';
import { DomainError, organizationEndpoints as endpoints, type Member, type MemberWithUser } from '@portcullis/contracts';
import { readAccountByEmail } from '../identity/account-model.ts';
import type { OrganizationPorts } from './ports.ts';
import { requestMetadataOf } from '../http/request-context.ts';
import { serverCall } from '../http/server-call.ts';
import { route } from '../http/declared-route.ts';
import { requireSession, resolveSession, type CurrentSession } from '../session/current-session.ts';
import { findUserById } from '../identity/user-queries.ts';
import { clearActiveOrganizationIf } from './active-organization.ts';
import { addMember } from './add-member.command.ts';
import type { RemovalTarget } from './member.decider.ts';
import { memberAnswer } from './organization-answers.ts';
import { findMemberWithUser, findOrganizationBySlug, listMembers } from './organization-queries.ts';
import { leaveOrganization } from './leave-organization.command.ts';
import { removeMember } from './remove-member.command.ts';
import { updateMemberRole } from './update-member-role.command.ts';

/** The organization a member read asks for: by slug, else by id, else the session's active one. */
async function requestedOrganizationId(
  ctx: OrganizationPorts,
  current: CurrentSession,
  query: { organizationId?: string | undefined; organizationSlug?: string | undefined },
): Promise<string> {
  let organizationId = query.organizationId || current.session.activeOrganizationId;
  if (query.organizationSlug) {
    const organization = await findOrganizationBySlug(ctx, query.organizationSlug);
    if (!organization) throw new DomainError('ORGANIZATION_NOT_FOUND');
    organizationId = organization.id;
  }
  if (!organizationId) throw new DomainError('NO_ACTIVE_ORGANIZATION');
  return organizationId;
}

/** A removal's target: anything holding '@' is an email (better-auth's rule), whose user is found in the log. */
async function removalTarget(ctx: OrganizationPorts, memberIdOrEmail: string): Promise<{ target: RemovalTarget; byEmail: boolean }> {
  if (!memberIdOrEmail.includes('@')) return { target: { memberId: memberIdOrEmail }, byEmail: false };
  const holder = await readAccountByEmail(ctx, memberIdOrEmail.toLowerCase());
  return { target: { userId: holder?.userId ?? null }, byEmail: true };
}

/** better-auth's member endpoints (`routes/crud-members.ts`). */
export function memberRoutes(ctx: OrganizationPorts) {
  const options = ctx.config.organization;
  return async function register(app: FastifyInstance): Promise<void> {
    route(app, endpoints.getActiveMember, async (request, reply): Promise<MemberWithUser> => {
      const current = await requireSession(ctx, request, reply);
      const organizationId = current.session.activeOrganizationId;
      if (!organizationId) throw new DomainError('NO_ACTIVE_ORGANIZATION');
      const member = await findMemberWithUser(ctx, organizationId, current.user.id);
      if (!member) throw new DomainError('MEMBER_NOT_FOUND');
      return member;
    });

    route(app, endpoints.getActiveMemberRole, async (request, reply) => {
      const { query } = request;
      const current = await requireSession(ctx, request, reply);
      const organizationId = await requestedOrganizationId(ctx, current, query);
      const caller = await findMemberWithUser(ctx, organizationId, current.user.id);
      if (!caller) throw new DomainError('YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION');
      if (!query.userId) return { role: caller.role };
      const other = await findMemberWithUser(ctx, organizationId, query.userId);
      if (!other) throw new DomainError('YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION');
      return { role: other.role };
    });

    route(app, endpoints.listMembers, async (request, reply) => {
      const { query } = request;
      const current = await requireSession(ctx, request, reply);
      const organizationId = await requestedOrganizationId(ctx, current, query);
      if (!(await findMemberWithUser(ctx, organizationId, current.user.id))) throw new DomainError('YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION');
      // better-auth reads 0 as "not given" for both.
      return listMembers(ctx, organizationId, {
        limit: query.limit || options.membershipLimit,
        offset: query.offset || 0,
        sortBy: query.sortBy,
        sortDirection: query.sortDirection,
        filterField: query.filterField,
        filterOperator: query.filterOperator,
        filterValue: query.filterValue,
      });
    });

    // Server only: better-auth's addMember has no HTTP route; here a backend calls it with AUTH_SERVER_API_KEY.
    // To anyone else the route does not exist, so the key is asked for before the body is validated: a
    // refusal of the body would tell them it does.
    await app.register(async (serverOnly) => {
      serverOnly.addHook('preValidation', async (request) => {
        const call = serverCall(ctx, request);
        if (call === 'absent') throw new DomainError('NOT_FOUND');
        if (call === 'refused') throw new DomainError('UNAUTHORIZED');
      });
      route(serverOnly, endpoints.addMember, async (request, reply): Promise<Member> => {
        const { body } = request;
        const session = body.organizationId ? null : await resolveSession(ctx, request, reply, { refresh: false });
        const organizationId = body.organizationId || session?.session.activeOrganizationId;
        if (!organizationId) throw new DomainError('NO_ACTIVE_ORGANIZATION');
        const added = await addMember(ctx, requestMetadataOf(request), { organizationId, userId: body.userId, role: body.role, teamId: body.teamId ?? null });
        return memberAnswer(added.organization.id, added.organization.members.get(added.memberId)!);
      });
    });

    route(app, endpoints.updateMemberRole, async (request, reply): Promise<Member> => {
      const { body } = request;
      const current = await requireSession(ctx, request, reply);
      const organizationId = body.organizationId || current.session.activeOrganizationId;
      if (!organizationId) throw new DomainError('NO_ACTIVE_ORGANIZATION');
      const org = await updateMemberRole(ctx, requestMetadataOf(request), { organizationId, actorUserId: current.user.id, memberId: body.memberId, role: body.role });
      return memberAnswer(org.id, org.members.get(body.memberId)!);
    });

    route(app, endpoints.removeMember, async (request, reply) => {
      const { body } = request;
      const current = await requireSession(ctx, request, reply);
      const organizationId = body.organizationId || current.session.activeOrganizationId;
      if (!organizationId) throw new DomainError('NO_ACTIVE_ORGANIZATION');
      const { target, byEmail } = await removalTarget(ctx, body.memberIdOrEmail);
      const removed = await removeMember(ctx, requestMetadataOf(request), { organizationId, actorUserId: current.user.id, target });
      if (removed.userId === current.user.id) await clearActiveOrganizationIf(ctx, request, reply, current, organizationId);
      // better-auth finds a member named by email together with its user, and answers it so.
      if (!byEmail) return { member: removed };
      const user = await findUserById(ctx, removed.userId);
      if (!user) return { member: removed };
      return { member: { ...removed, user: { id: user.id, name: user.name, email: user.email, image: user.image } } };
    });

    route(app, endpoints.leaveOrganization, async (request, reply): Promise<MemberWithUser> => {
      const { body } = request;
      const current = await requireSession(ctx, request, reply);
      const left = await leaveOrganization(ctx, requestMetadataOf(request), { organizationId: body.organizationId, userId: current.user.id });
      await clearActiveOrganizationIf(ctx, request, reply, current, body.organizationId);
      const { id, name, email, image } = current.user;
      return { ...memberAnswer(body.organizationId, left), user: { id, name, email, image } };
    });
  };
}
