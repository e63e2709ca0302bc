import { DomainError, EmailChanged, emailReservationModel, streams, UserUpdated, type DomainEvent, type User } from '@portcullis/contracts';
import type { RequestMetadata } from '@portcullis/platform';
import type { AdminPorts } from './ports.ts';
import { activeAccountIn } from '../identity/account-model.ts';
import { decideAccount, decideEmailMove } from '../identity/account.decider.ts';
import { endAllSessions } from '../session/session-lifecycle.ts';
import { decideActingOn, type AdminAuthority } from './access.decider.ts';
import { userAfter } from './change-user.command.ts';
import { adminUserModel, decideAdminUser } from './user-admin.decider.ts';
import type { UserFieldsChange } from './user-fields.ts';

export interface AdminUpdateUser {
  readonly by: AdminAuthority;
  readonly userId: string;
  /** Lower-cased; undefined: unchanged. */
  readonly email: string | undefined;
  /** As stored (comma-separated); undefined: unchanged. */
  readonly role: string | undefined;
  readonly fields: UserFieldsChange;
}

/**
 * An admin's update-user: the profile, the address (moved between reservations; no verification mail, the
 * admin sets the state), its verification, the role and the ban, in one append on the user's stream, under
 * the rule for admins acting on admins. A ban ends every session, as ban-user's does. Answers the user.
 */
export async function adminUpdateUser(ports: Pick<AdminPorts, 'commands'>, request: RequestMetadata, command: AdminUpdateUser): Promise<User> {
  const { by, userId, email, role, fields } = command;
  const bans = fields.ban !== undefined || fields.unban === true;
  const { result } = await ports.commands.handle(
    {
      name: 'admin.update-user',
      request,
      actorId: by.userId,
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
        // Another user's address: better-auth's admin message.
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
}
