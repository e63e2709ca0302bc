import type { FastifyInstance } from 'fastify';
import { adminEndpoints as endpoints, DomainError } from '@portcullis/contracts';
import type { AdminPorts } from './ports.ts';
import { route } from '../http/declared-route.ts';
import { requestMetadataOf } from '../http/request-context.ts';
import { checkNewPassword, checkPresentedPassword, normalizeEmail } from '../identity/password-policy.ts';
import { requireSession } from '../session/current-session.ts';
import { authorityOf, callerMay, existingUser, requireAdmin, requireAdminAction } from './admin-guard.ts';
import { hasAdminPermission } from './access.decider.ts';
import { changeUser } from './change-user.command.ts';
import { createUser } from './create-user.command.ts';
import { removeUser } from './remove-user.command.ts';
import { setUserPassword } from './set-user-password.command.ts';
import { adminUpdateUser } from './update-user.command.ts';
import { decideUserFields } from './user-fields.ts';
import { listUsers } from './user-list.ts';

/** better-auth's `parseRoles`: several roles are stored comma-separated. */
function roleValue(role: unknown): string {
  const roles = Array.isArray(role) ? (role as unknown[]) : [role];
  if (roles.some((r) => typeof r !== 'string')) throw new DomainError('INVALID_ROLE_TYPE');
  return roles.join(',');
}

/** The admin plugin's user routes: each checks the caller's permission, then runs its command. */
export function adminUserRoutes(ctx: AdminPorts) {
  return async function register(app: FastifyInstance): Promise<void> {
    route(app, endpoints.listUsers, async (request, reply) => {
      await requireAdmin(ctx, request, reply, { user: ['list'] }, 'YOU_ARE_NOT_ALLOWED_TO_LIST_USERS');
      return listUsers(ctx, request.query);
    });

    route(app, endpoints.getUser, async (request, reply) => {
      await requireAdmin(ctx, request, reply, { user: ['get'] }, 'YOU_ARE_NOT_ALLOWED_TO_GET_USER');
      return existingUser(ctx, request.query.id);
    });

    route(app, endpoints.createUser, async (request, reply) => {
      const caller = await requireAdminAction(ctx, request, reply, { user: ['create'] }, 'YOU_ARE_NOT_ALLOWED_TO_CREATE_USERS');
      const { body } = request;
      const { role: dataRole, ...data } = body.data ?? {};
      const requested = body.role ?? dataRole;
      let role: string | null = null;
      if (requested !== undefined) {
        if (!callerMay(ctx, caller, { user: ['set-role'] })) throw new DomainError('YOU_ARE_NOT_ALLOWED_TO_CHANGE_USERS_ROLE');
        role = roleValue(requested);
      }
      const banning = ['banned', 'banReason', 'banExpires'].some((key) => Object.hasOwn(data, key));
      if (banning && !callerMay(ctx, caller, { user: ['ban'] })) throw new DomainError('YOU_ARE_NOT_ALLOWED_TO_BAN_USERS');
      const email = normalizeEmail(body.email);
      const fields = decideUserFields(data, { creating: true });
      if (body.password) checkPresentedPassword(ctx.config, body.password);
      const user = await createUser(ctx, requestMetadataOf(request), {
        by: authorityOf(ctx, caller),
        email,
        name: body.name,
        image: fields.image ?? null,
        emailVerified: fields.emailVerified ?? false,
        password: body.password || null,
        role,
        ban: fields.ban ?? null,
      });
      return { user };
    });

    route(app, endpoints.updateUser, async (request, reply) => {
      const caller = await requireAdminAction(ctx, request, reply, { user: ['update'] }, 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_USERS');
      const { userId, data } = request.body;
      if (Object.keys(data).length === 0) throw new DomainError('NO_DATA_TO_UPDATE');
      const has = (key: string): boolean => Object.hasOwn(data, key);
      if (has('password')) throw new DomainError('PASSWORD_CANNOT_BE_UPDATED_VIA_UPDATE_USER');
      if (has('id')) throw new DomainError('USER_ID_CANNOT_BE_UPDATED');
      let role: string | undefined;
      if (has('role')) {
        if (!callerMay(ctx, caller, { user: ['set-role'] })) throw new DomainError('YOU_ARE_NOT_ALLOWED_TO_CHANGE_USERS_ROLE');
        role = roleValue(data.role);
      }
      if (has('banned') || has('banReason') || has('banExpires')) {
        if (!callerMay(ctx, caller, { user: ['ban'] })) throw new DomainError('YOU_ARE_NOT_ALLOWED_TO_BAN_USERS');
        if (data.banned === true && userId === caller.user.id) throw new DomainError('YOU_CANNOT_BAN_YOURSELF');
      }
      let email: string | undefined;
      if (has('email') || has('emailVerified')) {
        if (!callerMay(ctx, caller, { user: ['set-email'] })) throw new DomainError('YOU_ARE_NOT_ALLOWED_TO_SET_USERS_EMAIL');
        if (has('email')) email = normalizeEmail(String(data.email));
      }
      const { role: _role, email: _email, ...rest } = data;
      const fields = decideUserFields(rest, { creating: false });
      return adminUpdateUser(ctx, requestMetadataOf(request), { by: authorityOf(ctx, caller), userId, email, role, fields });
    });

    route(app, endpoints.setRole, async (request, reply) => {
      const caller = await requireAdminAction(ctx, request, reply, { user: ['set-role'] }, 'YOU_ARE_NOT_ALLOWED_TO_CHANGE_USERS_ROLE');
      const { userId, role } = request.body;
      return { user: await changeUser(ctx, requestMetadataOf(request), userId, { type: 'set-role', by: authorityOf(ctx, caller), role: roleValue(role) }) };
    });

    route(app, endpoints.banUser, async (request, reply) => {
      const caller = await requireAdminAction(ctx, request, reply, { user: ['ban'] }, 'YOU_ARE_NOT_ALLOWED_TO_BAN_USERS');
      const { userId, banReason, banExpiresIn } = request.body;
      const expiresAt = banExpiresIn ? new Date(ctx.clock().getTime() + banExpiresIn * 1000).toISOString() : null;
      const command = { type: 'ban' as const, by: authorityOf(ctx, caller), reason: banReason || 'No reason', expiresAt };
      return { user: await changeUser(ctx, requestMetadataOf(request), userId, command) };
    });

    route(app, endpoints.unbanUser, async (request, reply) => {
      const caller = await requireAdminAction(ctx, request, reply, { user: ['ban'] }, 'YOU_ARE_NOT_ALLOWED_TO_BAN_USERS');
      return { user: await changeUser(ctx, requestMetadataOf(request), request.body.userId, { type: 'unban', by: authorityOf(ctx, caller) }) };
    });

    route(app, endpoints.removeUser, async (request, reply) => {
      const caller = await requireAdminAction(ctx, request, reply, { user: ['delete'] }, 'YOU_ARE_NOT_ALLOWED_TO_DELETE_USERS');
      await removeUser(ctx, requestMetadataOf(request), { by: authorityOf(ctx, caller), userId: request.body.userId });
      return { success: true };
    });

    route(app, endpoints.setUserPassword, async (request, reply) => {
      const caller = await requireAdminAction(ctx, request, reply, { user: ['set-password'] }, 'YOU_ARE_NOT_ALLOWED_TO_SET_USERS_PASSWORD');
      const { userId, newPassword } = request.body;
      checkNewPassword(ctx.config, newPassword);
      // An unknown user is answered before any hashing.
      await existingUser(ctx, userId);
      await setUserPassword(ctx, requestMetadataOf(request), { by: authorityOf(ctx, caller), userId, newPassword });
      return { status: true };
    });

    route(app, endpoints.hasPermission, async (request, reply) => {
      // Earlier better-auth clients send the singular `permission`, which 1.7 still declares: both are taken.
      const permissions = request.body.permissions ?? request.body.permission;
      if (!permissions) throw new DomainError('INVALID_PERMISSION_CHECK');
      const caller = await requireSession(ctx, request, reply);
      const success = hasAdminPermission({ userId: caller.user.id, role: caller.user.role, adminUserIds: ctx.config.admin.adminUserIds, permissions });
      return { error: null, success };
    });
  };
}
