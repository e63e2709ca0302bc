import type { FastifyInstance } from 'fastify';
import {
  DomainError,
  projectionNames,
  rolesGrant,
  teamEndpoints as endpoints,
  type TeamMember,
} from '@portcullis/contracts';
import type { OrganizationPorts } from './ports.ts';
import { requestMetadataOf } from '../http/request-context.ts';
import { route } from '../http/declared-route.ts';
import { requireSession, resolveSession, type CurrentSession } from '../session/current-session.ts';
import { readOrganization, setActiveSelection } from './organization-model.ts';
import { teamStateAnswer } from './organization-answers.ts';
import { activeTeamFor } from './team.decider.ts';
import { createTeam } from './create-team.command.ts';
import { updateTeam } from './update-team.command.ts';
import { removeTeam } from './remove-team.command.ts';
import { addTeamMember } from './add-team-member.command.ts';
import { removeTeamMember } from './remove-team-member.command.ts';
import {
  findTeam,
  findTeamMember,
  listOrganizationTeams,
  listTeamMembers,
  listTeamsOfUser,
  memberRole,
} from './team-queries.ts';

/** The organization a call is about: the one it names, else the session's active one. */
function targetOrganization(named: string | undefined, current: CurrentSession | null): string {
  const organizationId = named || current?.session.activeOrganizationId;
  if (!organizationId) throw new DomainError('NO_ACTIVE_ORGANIZATION');
  return organizationId;
}

/**
 * better-auth's team endpoints (`routes/crud-team.ts`). Changes are decided on the organization stream
 * (team.decider.ts); lists are read from the `team` and `teamMember` read models.
 */
export function teamRoutes(ctx: OrganizationPorts) {
  const teams = ctx.config.organization.teams;
  return async function register(app: FastifyInstance): Promise<void> {
    // better-auth registers these endpoints only with teams on; without them they do not exist (404).
    if (!teams.enabled) return;

    route(app, endpoints.createTeam, async (request, reply) => {
      const { body } = request;
      const current = await requireSession(ctx, request, reply);
      const organizationId = targetOrganization(body.organizationId, current);
      return createTeam(ctx, requestMetadataOf(request), { organizationId, actorUserId: current.user.id, name: body.name });
    });

    route(app, endpoints.updateTeam, async (request, reply) => {
      const { body } = request;
      const current = await requireSession(ctx, request, reply);
      const organizationId = targetOrganization(body.data.organizationId, current);
      return updateTeam(ctx, requestMetadataOf(request), { organizationId, actorUserId: current.user.id, teamId: body.teamId, name: body.data.name });
    });

    route(app, endpoints.removeTeam, async (request, reply) => {
      const { body } = request;
      const current = await resolveSession(ctx, request, reply, { refresh: false });
      // better-auth looks for the organization before the session, so its refusal comes first.
      const organizationId = targetOrganization(body.organizationId, current);
      if (!current) throw new DomainError('UNAUTHORIZED');
      await removeTeam(ctx, requestMetadataOf(request), { organizationId, actorUserId: current.user.id, actorActiveTeamId: current.session.activeTeamId, teamId: body.teamId });
      return { message: 'Team removed successfully.' };
    });

    route(app, endpoints.listTeams, async (request, reply) => {
      const { query } = request;
      const current = await requireSession(ctx, request, reply);
      const organizationId = targetOrganization(query.organizationId, current);
      if ((await memberRole(ctx, organizationId, current.user.id)) === null) {
        throw new DomainError('YOU_ARE_NOT_ALLOWED_TO_ACCESS_THIS_ORGANIZATION');
      }
      return listOrganizationTeams(ctx, organizationId);
    });

    route(app, endpoints.listUserTeams, async (request, reply) => {
      const { query } = request;
      const current = await requireSession(ctx, request, reply);
      const userId = query.userId || current.user.id;
      if (userId !== current.user.id) {
        // Another member's teams: only for who may update members, within one organization.
        const organizationId = targetOrganization(query.organizationId, current);
        const role = await memberRole(ctx, organizationId, current.user.id);
        if (role === null) throw new DomainError('YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION');
        if (!rolesGrant(role, { member: ['update'] })) throw new DomainError('YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER');
        if ((await memberRole(ctx, organizationId, userId)) === null) throw new DomainError('USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION');
        return listTeamsOfUser(ctx, userId, organizationId);
      }
      if (query.organizationId) {
        if ((await memberRole(ctx, query.organizationId, userId)) === null) {
          throw new DomainError('YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION');
        }
        return listTeamsOfUser(ctx, userId, query.organizationId);
      }
      return listTeamsOfUser(ctx, userId, null);
    });

    route(app, endpoints.setActiveTeam, async (request, reply) => {
      const { body } = request;
      const current = await requireSession(ctx, request, reply);
      const { activeOrganizationId, activeTeamId } = current.session;
      if (body.teamId === null) {
        if (activeTeamId) await setActiveSelection(ctx, request, reply, current, { activeOrganizationId, activeTeamId: null });
        return null;
      }
      // No team named: the current one is checked again and answered.
      const teamId = body.teamId || activeTeamId;
      if (!teamId) return null;
      if (!activeOrganizationId) throw new DomainError('NO_ACTIVE_ORGANIZATION');
      const state = await readOrganization(ctx, activeOrganizationId);
      const team = activeTeamFor(state, { teamId, userId: current.user.id });
      await setActiveSelection(ctx, request, reply, current, { activeOrganizationId, activeTeamId: team.id });
      return teamStateAnswer(activeOrganizationId, team);
    });

    route(app, endpoints.listTeamMembers, async (request, reply) => {
      const { query } = request;
      const current = await requireSession(ctx, request, reply);
      const teamId = query.teamId || current.session.activeTeamId;
      if (!teamId) throw new DomainError('YOU_DO_NOT_HAVE_AN_ACTIVE_TEAM');
      const team = await findTeam(ctx, teamId);
      if (!team) throw new DomainError('TEAM_NOT_FOUND');
      // Only the team's own members see who is in it, an owner outside the team included (better-auth 1.7).
      const inOrganization = (await memberRole(ctx, team.organizationId, current.user.id)) !== null;
      if (!inOrganization || !(await findTeamMember(ctx, teamId, current.user.id))) {
        throw new DomainError('USER_IS_NOT_A_MEMBER_OF_THE_TEAM');
      }
      return listTeamMembers(ctx, teamId);
    });

    route(app, endpoints.addTeamMember, async (request, reply) => {
      const { body } = request;
      const current = await requireSession(ctx, request, reply);
      const organizationId = targetOrganization(body.organizationId, current);
      const added = await addTeamMember(ctx, requestMetadataOf(request), { organizationId, actorUserId: current.user.id, teamId: body.teamId, userId: body.userId });
      if (added) return added;
      return existingTeamMember(ctx, body.teamId, body.userId);
    });

    route(app, endpoints.removeTeamMember, async (request, reply) => {
      const { body } = request;
      const current = await requireSession(ctx, request, reply);
      const organizationId = targetOrganization(body.organizationId, current);
      await removeTeamMember(ctx, requestMetadataOf(request), { organizationId, actorUserId: current.user.id, teamId: body.teamId, userId: body.userId });
      return { message: 'Team member removed successfully.' };
    });
  };
}

/**
 * Adding someone already in the team answers their membership as it is stored. Its row may trail the log
 * by a moment when another request added them just now, so wait for the log's head before reading again.
 */
async function existingTeamMember(ctx: OrganizationPorts, teamId: string, userId: string): Promise<TeamMember> {
  const found = await findTeamMember(ctx, teamId, userId);
  if (found) return found;
  await ctx.progress.waitFor(await ctx.store.headPosition(), [projectionNames.organizations]);
  const caughtUp = await findTeamMember(ctx, teamId, userId);
  if (!caughtUp) throw new DomainError('USER_IS_NOT_A_MEMBER_OF_THE_TEAM');
  return caughtUp;
}
