import { DomainError, evolveUserAnswer, streams, type DomainEvent, type User } from '@portcullis/contracts';
import type { RequestMetadata, UnitOfWork } from '@portcullis/platform';
import type { AdminPorts } from './ports.ts';
import { userAnswerModel } from '../session/session-answer.state.ts';
import { endAllSessions } from '../session/session-lifecycle.ts';
import { adminUserModel, decideAdminUser, type AdminUserCommand } from './user-admin.decider.ts';

/** The user as answered after a unit's events for them, folded at the unit's time as the log will hold them. */
export async function userAfter(unit: UnitOfWork, userId: string, events: readonly DomainEvent[]): Promise<User> {
  const before = (await unit.load(streams.user(userId), userAnswerModel)).state;
  const after = events.reduce<User | null>((user, event) => evolveUserAnswer(user, event, unit.now.toISOString()), before);
  if (!after) throw new DomainError('USER_NOT_FOUND');
  return after;
}

/**
 * set-role, ban-user, unban-user: an admin's change to a user's role or ban, one command on the user's stream
 * (`decideAdminUser`); a ban also ends every session of theirs and every impersonation session they opened,
 * through the same path as sign-out. Answers the user as changed.
 */
export async function changeUser(ports: Pick<AdminPorts, 'commands'>, request: RequestMetadata, userId: string, command: AdminUserCommand): Promise<User> {
  const banning = command.type === 'ban';
  const { result } = await ports.commands.handle(
    {
      name: `admin.${command.type}`,
      request,
      actorId: command.by.userId,
      actorKind: 'admin',
      serialize: [streams.user(userId), ...(banning ? [streams.userSessions(userId)] : [])],
      ...(banning ? { settle: 'revocation' as const } : {}),
    },
    async (unit) => {
      const user = await unit.load(streams.user(userId), adminUserModel);
      const events = decideAdminUser(command, user.state);
      unit.append(user.streamId, events);
      if (banning) await endAllSessions(unit, userId, 'banned');
      return userAfter(unit, userId, events);
    },
  );
  return result;
}
