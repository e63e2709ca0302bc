import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, streams, type ErrorCode, type User } from '@portcullis/contracts';
import { loadStream } from '@portcullis/platform';
import type { ApiContext } from '../context.ts';
import { requireSession, resolveSession, type CurrentSession } from '../session/current-session.ts';
import { userAnswerModel } from '../session/session-log.ts';
import { hasAdminPermission, type Permissions } from './access.decider.ts';

/** Whether the caller's roles (or ADMIN_USER_IDS) grant the permissions. */
export function callerMay(ctx: ApiContext, caller: CurrentSession, permissions: Permissions): boolean {
  return hasAdminPermission({ userId: caller.user.id, role: caller.user.role, adminUserIds: ctx.config.admin.adminUserIds, permissions });
}

/**
 * better-auth's admin middleware and permission check: a signed-in caller (401 otherwise) holding the
 * permissions, else 403 with the action's own message.
 */
export async function requireAdmin(
  ctx: ApiContext,
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
 * Whether the caller's session is an operator's, for the ops endpoints that take one (the audit trail): an
 * admin who may list users and their sessions, as reading everyone's history amounts to.
 */
export async function operatorSession(ctx: ApiContext, request: FastifyRequest, reply: FastifyReply): Promise<'operator' | 'refused' | 'none'> {
  const caller = await resolveSession(ctx, request, reply, { refresh: false });
  if (!caller) return 'none';
  return callerMay(ctx, caller, { user: ['list'], session: ['list'] }) ? 'operator' : 'refused';
}

/** The user as every answer shows it, folded from the log itself: what an admin just changed is in it. */
export async function userFromLog(ctx: ApiContext, userId: string): Promise<User | null> {
  return (await loadStream(ctx.store, streams.user(userId), userAnswerModel)).state;
}

export async function existingUser(ctx: ApiContext, userId: string): Promise<User> {
  const user = await userFromLog(ctx, userId);
  if (!user) throw new DomainError('USER_NOT_FOUND');
  return user;
}
