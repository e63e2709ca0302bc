import type { FastifyInstance, FastifyRequest } from 'fastify';
import { adminEndpoints as endpoints, DomainError, EmailChanged, evolveUserAnswer, streams, UserUpdated, type DomainEvent, type User } from '@portcullis/contracts';
import { generateId, hashPassword, type UnitOfWork } from '@portcullis/platform';
import type { ApiContext } from '../context.ts';
import { route } from '../http/declared-route.ts';
import { requestMetadataOf } from '../http/request-context.ts';
import { accountIn, activeAccountIn, emailReservationIn } from '../identity/account-model.ts';
import { decideAccount, decideEmailMove } from '../identity/account.decider.ts';
import { emailReservationModel } from '@portcullis/contracts';
import { checkNewPassword, checkPresentedPassword, normalizeEmail } from '../identity/password-policy.ts';
import { deleteUserIn } from '../identity/user-deletion.ts';
import { requireSession } from '../session/current-session.ts';
import { endAllSessions, endImpersonationsOpenedBy } from '../session/session-lifecycle.ts';
import { userAnswerModel } from '../session/session-answer.state.ts';
import { authorityOf, callerMay, decideOnTarget, existingUser, requireAdmin, requireAdminAction } from './admin-guard.ts';
import { decideActingOn, hasAdminPermission } from './access.decider.ts';
import { adminUserModel, decideAdminUser, decideCreateUser, type AdminUserCommand } from './user-admin.decider.ts';
import { decideUserFields, type UserFieldsChange } from './user-fields.ts';
import { listUsers } from './user-list.ts';

/** better-auth's `parseRoles`: several roles are stored comma-separated. */
function roleValue(role: unknown): string {
  const roles = Array.isArray(role) ? (role as unknown[]) : [role];
  if (roles.some((r) => typeof r !== 'string')) throw new DomainError('INVALID_ROLE_TYPE');
  return roles.join(',');
}

/** The user as answered after a unit's events for them, folded at the unit's time as the log will hold them. */
async function userAfter(unit: UnitOfWork, userId: string, events: readonly DomainEvent[]): Promise<User> {
  const before = (await unit.load(streams.user(userId), userAnswerModel)).state;
  const after = events.reduce<User | null>((user, event) => evolveUserAnswer(user, event, unit.now.toISOString()), before);
  if (!after) throw new DomainError('USER_NOT_FOUND');
  return after;
}

/**
 * An admin's change to a user's role or ban, one command on the user's stream; a ban also ends every session
 * of theirs, and every impersonation session they opened.
 */
async function changeUser(ctx: ApiContext, request: FastifyRequest, userId: string, command: AdminUserCommand): Promise<User> {
  const { result } = await ctx.commands.handle(
    {
      name: `admin.${command.type}`,
      request: requestMetadataOf(request),
      actorId: command.by.userId,
      actorKind: 'admin',
      serialize: [streams.user(userId), ...(command.type === 'ban' ? [streams.userSessions(userId)] : [])],
      ...(command.type === 'ban' ? { settle: 'revocation' as const } : {}),
    },
    async (unit) => {
      const user = await unit.load(streams.user(userId), adminUserModel);
      const events = decideAdminUser(command, user.state);
      unit.append(user.streamId, events);
      // Through the same authoritative path as sign-out: answered once no api process or cache holds any of them.
      if (command.type === 'ban') await endAllSessions(unit, userId, 'banned');
      return userAfter(unit, userId, events);
    },
  );
  return result;
}

export function adminUserRoutes(ctx: ApiContext) {
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
      // better-auth checks only the upper bound here: an admin may set a short password.
      if (body.password) checkPresentedPassword(ctx.config, body.password);
      const passwordHash = body.password ? await hashPassword(body.password) : null;
      const userId = generateId();
      const { result } = await ctx.commands.handle(
        { name: 'admin.create-user', request: requestMetadataOf(request), actorId: caller.user.id, actorKind: 'admin', serialize: [streams.email(email)] },
        async (unit) => {
          const reservation = await emailReservationIn(unit, email);
          const created = decideCreateUser(
            {
              userId,
              email,
              name: body.name,
              image: fields.image ?? null,
              emailVerified: fields.emailVerified ?? false,
              credential: passwordHash ? { accountId: generateId(), passwordHash } : null,
              role,
            },
            reservation.state,
          );
          const createdState = { status: 'registered', userId, role: role ?? 'user', banned: false } as const;
          const ban = fields.ban ? decideAdminUser({ type: 'ban', by: authorityOf(ctx, caller), ...fields.ban }, createdState) : [];
          unit.append(reservation.streamId, created.reservation);
          unit.append(streams.user(userId), [...created.user, ...ban], { expected: 'no_stream' });
          return [...created.user, ...ban].reduce<User | null>((user, event) => evolveUserAnswer(user, event, unit.now.toISOString()), null)!;
        },
      );
      return { user: result };
    });

    route(app, endpoints.updateUser, async (request, reply) => {
      const caller = await requireAdminAction(ctx, request, reply, { user: ['update'] }, 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_USERS');
      const by = authorityOf(ctx, caller);
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
      const fields: UserFieldsChange = decideUserFields(rest, { creating: false });
      const bans = fields.ban !== undefined || fields.unban === true;
      const { result } = await ctx.commands.handle(
        {
          name: 'admin.update-user',
          request: requestMetadataOf(request),
          actorId: caller.user.id,
          actorKind: 'admin',
          serialize: [streams.user(userId), ...(bans ? [streams.userSessions(userId)] : [])],
          ...(fields.ban ? { settle: 'revocation' as const } : {}),
        },
        async (unit) => {
          const account = await activeAccountIn(unit, userId);
          const admin = await unit.load(streams.user(userId), adminUserModel);
          if (admin.state.status === 'registered') decideActingOn(by, admin.state);
          const events: DomainEvent[] = [];
          const current = account.state.email;
          if (email !== undefined && email !== current) {
            const [from, to] = await unit.loadAll([
              [streams.email(current), emailReservationModel],
              [streams.email(email), emailReservationModel],
            ]);
            // Another user's address: better-auth's admin message. No verification mail: the admin sets the state.
            if (to!.state.status === 'reserved') throw new DomainError('USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL');
            const move = decideEmailMove({ userId, from: current, to: email }, from!.state, to!.state);
            const verified = fields.emailVerified ?? account.state.emailVerified;
            events.push(...decideAccount({ type: 'change-email', newEmail: email, verified }, account.state));
            unit.append(from!.streamId, move.released);
            unit.append(to!.streamId, move.reserved);
          } else if (fields.emailVerified === true && !account.state.emailVerified) {
            events.push(...decideAccount({ type: 'verify-email', email: current }, account.state));
          } else if (fields.emailVerified === false && account.state.emailVerified) {
            // No event un-verifies an address but a change to the same one, unverified.
            events.push(EmailChanged({ userId, previousEmail: current, email: current, emailVerified: false }));
          }
          if (fields.profile) events.push(UserUpdated({ userId, ...fields.profile }));
          if (role !== undefined) events.push(...decideAdminUser({ type: 'set-role', by, role }, admin.state));
          if (fields.ban) events.push(...decideAdminUser({ type: 'ban', by, ...fields.ban }, admin.state));
          if (fields.unban) events.push(...decideAdminUser({ type: 'unban', by }, admin.state));
          unit.append(account.streamId, events);
          if (fields.ban) await endAllSessions(unit, userId, 'banned');
          return userAfter(unit, userId, events);
        },
      );
      return result;
    });

    route(app, endpoints.setRole, async (request, reply) => {
      const caller = await requireAdminAction(ctx, request, reply, { user: ['set-role'] }, 'YOU_ARE_NOT_ALLOWED_TO_CHANGE_USERS_ROLE');
      const { userId, role } = request.body;
      return { user: await changeUser(ctx, request, userId, { type: 'set-role', by: authorityOf(ctx, caller), role: roleValue(role) }) };
    });

    route(app, endpoints.banUser, async (request, reply) => {
      const caller = await requireAdminAction(ctx, request, reply, { user: ['ban'] }, 'YOU_ARE_NOT_ALLOWED_TO_BAN_USERS');
      const { userId, banReason, banExpiresIn } = request.body;
      const expiresAt = banExpiresIn ? new Date(ctx.clock().getTime() + banExpiresIn * 1000).toISOString() : null;
      const command = { type: 'ban' as const, by: authorityOf(ctx, caller), reason: banReason || 'No reason', expiresAt };
      return { user: await changeUser(ctx, request, userId, command) };
    });

    route(app, endpoints.unbanUser, async (request, reply) => {
      const caller = await requireAdminAction(ctx, request, reply, { user: ['ban'] }, 'YOU_ARE_NOT_ALLOWED_TO_BAN_USERS');
      return { user: await changeUser(ctx, request, request.body.userId, { type: 'unban', by: authorityOf(ctx, caller) }) };
    });

    route(app, endpoints.removeUser, async (request, reply) => {
      const caller = await requireAdminAction(ctx, request, reply, { user: ['delete'] }, 'YOU_ARE_NOT_ALLOWED_TO_DELETE_USERS');
      const { userId } = request.body;
      if (userId === caller.user.id) throw new DomainError('YOU_CANNOT_REMOVE_YOURSELF');
      await ctx.commands.handle(
        { name: 'admin.remove-user', request: requestMetadataOf(request), actorId: caller.user.id, actorKind: 'admin', serialize: [streams.user(userId)], settle: 'revocation' },
        async (unit) => {
          const account = await activeAccountIn(unit, userId);
          await decideOnTarget(unit, authorityOf(ctx, caller), userId);
          await deleteUserIn(unit, ctx, account);
        },
      );
      return { success: true };
    });

    route(app, endpoints.setUserPassword, async (request, reply) => {
      const caller = await requireAdminAction(ctx, request, reply, { user: ['set-password'] }, 'YOU_ARE_NOT_ALLOWED_TO_SET_USERS_PASSWORD');
      const { userId, newPassword } = request.body;
      checkNewPassword(ctx.config, newPassword);
      await existingUser(ctx, userId);
      const passwordHash = await hashPassword(newPassword);
      await ctx.commands.handle(
        {
          name: 'admin.set-user-password',
          request: requestMetadataOf(request),
          actorId: caller.user.id,
          actorKind: 'admin',
          serialize: [streams.user(userId)],
          settle: 'revocation',
        },
        async (unit) => {
          const account = await accountIn(unit, userId);
          await decideOnTarget(unit, authorityOf(ctx, caller), userId);
          // A reset by someone else: it also lifts a sign-in lock, and creates the password account if there is none.
          unit.append(account.streamId, decideAccount({ type: 'reset-password', passwordHash, newAccountId: generateId() }, account.state));
          // Whoever knew the old password could have opened impersonation sessions as this admin: they end with it.
          await endImpersonationsOpenedBy(unit, userId, 'password_reset');
        },
      );
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

