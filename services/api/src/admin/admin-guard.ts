import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, streams, type ErrorCode, type User } from '@portcullis/contracts';
import { loadStream, type UnitOfWork } from '@portcullis/platform';
import type { AdminPorts } from './ports.ts';
import { requireSession, resolveSession, type CurrentSession } from '../session/current-session.ts';
import { userAnswerModel } from '../session/session-answer.state.ts';
import { decideActingOn, hasAdminPermission, type AdminAuthority, type Permissions } from './access.decider.ts';
import { adminUserModel } from './user-admin.decider.ts';

/** Whether the caller's roles (or ADMIN_USER_IDS) grant the permissions. */
export function callerMay(ctx: AdminPorts, caller: CurrentSession, permissions: Permissions): boolean {
  return hasAdminPermission({ userId: caller.user.id, role: caller.user.role, adminUserIds: ctx.config.admin.adminUserIds, permissions });
}

/**
 * better-auth's admin middleware and permission check: a signed-in caller (401 otherwise) holding the
 * permissions, else 403 with the action's own message.
 */
export async function requireAdmin(
  ctx: AdminPorts,
  request: FastifyRequest,
  reply: FastifyReply,
  permissions: Permissions,
  refusal: ErrorCode,
): Promise<CurrentSession> {
  const caller = await requireSession(ctx, request, reply);
  if (!callerMay(ctx, caller, permissions)) throw new DomainError(refusal);
  return caller;
}

/**
 * `requireAdmin` for an action that changes something. Not from an impersonation session, which better-auth
 * lets act with the impersonated user's admin rights: an admin impersonating another admin would then act
 * under that admin's name, and one impersonating from there would leave the first admin out of the trail.
 * Admin work is done from the admin's own session (stop-impersonating gives it back); an impersonation
 * session keeps the reads, with the rights of the user it shows.
 */
export async function requireAdminAction(
  ctx: AdminPorts,
  request: FastifyRequest,
  reply: FastifyReply,
  permissions: Permissions,
  refusal: ErrorCode,
): Promise<CurrentSession> {
  const caller = await requireAdmin(ctx, request, reply, permissions, refusal);
  if (caller.session.impersonatedBy) throw new DomainError('YOU_CANNOT_ACT_AS_ADMIN_WHILE_IMPERSONATING');
  return caller;
}

/** The caller as the admin commands decide on them. */
export function authorityOf(ctx: AdminPorts, caller: CurrentSession): AdminAuthority {
  return { userId: caller.user.id, adminUserIds: ctx.config.admin.adminUserIds };
}

/**
 * Whether the caller's session is an operator's, for the ops endpoints that take one (the audit trail): an
 * admin who may list users and their sessions, as reading everyone's history amounts to, in their own session.
 */
export async function operatorSession(ctx: AdminPorts, request: FastifyRequest, reply: FastifyReply): Promise<'operator' | 'refused' | 'none'> {
  const caller = await resolveSession(ctx, request, reply, { refresh: false });
  if (!caller) return 'none';
  // Operating is done as oneself, as admin actions are (see requireAdminAction).
  if (caller.session.impersonatedBy) return 'refused';
  return callerMay(ctx, caller, { user: ['list'], session: ['list'] }) ? 'operator' : 'refused';
}

/** The user as every answer shows it, folded from the log itself: what an admin just changed is in it. */
async function userFromLog(ctx: AdminPorts, userId: string): Promise<User | null> {
  return (await loadStream(ctx.store, streams.user(userId), userAnswerModel)).state;
}

export async function existingUser(ctx: AdminPorts, userId: string): Promise<User> {
  const user = await userFromLog(ctx, userId);
  if (!user) throw new DomainError('USER_NOT_FOUND');
  return user;
}

/** Within an admin's command on a user: the rule for admins acting on admins, on the user's stream as decided on. */
export async function decideOnTarget(unit: UnitOfWork, by: AdminAuthority, userId: string, refusal?: 'YOU_CANNOT_IMPERSONATE_ADMINS'): Promise<void> {
  const target = await unit.load(streams.user(userId), adminUserModel);
  if (target.state.status === 'registered') decideActingOn(by, target.state, refusal);
}
