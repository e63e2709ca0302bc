import { DomainError, type DomainEvent, normalizeUsername, streams, type User, type UsernameBounds, usernameProblem } from '@portcullis/contracts';
import { loadStream, type UnitOfWork } from '@portcullis/platform';
import type { IdentityPorts } from './ports.ts';
import { userModel } from './user.decider.ts';
import {
  decideUsernameClaim,
  decideUsernameRelease,
  initialUsernameFields,
  usernameFieldsChanged,
  usernameReservationModel,
  type UsernameFields,
  type UsernameReservationState,
} from './username.decider.ts';

/** Refuses a username that breaks the rules, with the username plugin's 422s. */
export function checkUsername(bounds: UsernameBounds, username: string): void {
  const problem = usernameProblem(username, bounds);
  if (problem) throw new DomainError(problem);
}

/** The stream that reserves a username, whatever its case as typed. */
export function usernameReservationStream(username: string): string {
  return streams.username(normalizeUsername(username));
}

/** A username's reservation as the log holds it now, for a read that decides nothing. */
export async function readUsernameReservation(ctx: IdentityPorts, username: string): Promise<UsernameReservationState> {
  return (await loadStream(ctx.store, usernameReservationStream(username), usernameReservationModel)).state;
}

/** The username fields of a user answer: present once set, as better-auth's username plugin adds them. */
export function usernameAnswerFields(fields: UsernameFields): Pick<User, 'username' | 'displayUsername'> {
  return {
    ...(fields.username !== null ? { username: fields.username } : {}),
    ...(fields.displayUsername !== null ? { displayUsername: fields.displayUsername } : {}),
  };
}

/** A sign-up answer with the username fields on its user (also the undisclosed one for a taken address). */
export function withUsernameFields<Answer extends { user: User }>(answer: Answer, fields: UsernameFields): Answer {
  return { ...answer, user: { ...answer.user, ...usernameAnswerFields(fields) } };
}

/**
 * better-auth's sign-up hooks: a display username that is a valid username stands in for a missing
 * username; a username is checked against the rules and must be free, before anything else is decided (it
 * is claimed atomically with the account, see `claimSignUpUsername`).
 */
export async function prepareSignUpUsername(
  ctx: IdentityPorts,
  body: { username?: string | undefined; displayUsername?: string | undefined },
): Promise<UsernameFields> {
  let username = body.username;
  if (username === undefined && body.displayUsername !== undefined && !usernameProblem(body.displayUsername, ctx.config.username)) {
    username = body.displayUsername;
  }
  if (username === undefined) return initialUsernameFields(body);
  checkUsername(ctx.config.username, username);
  if ((await readUsernameReservation(ctx, username)).status === 'reserved') throw new DomainError('USERNAME_IS_ALREADY_TAKEN');
  return initialUsernameFields({ username, displayUsername: body.displayUsername });
}

/**
 * Within the sign-up's command: the username's reservation (USERNAME_IS_ALREADY_TAKEN when a racing
 * sign-up got it first), and the events for the new user's stream.
 */
export async function claimSignUpUsername(unit: UnitOfWork, fields: UsernameFields, userId: string): Promise<DomainEvent[]> {
  if (fields.username !== null) {
    const reservation = await unit.load(streams.username(fields.username), usernameReservationModel);
    unit.append(reservation.streamId, decideUsernameClaim({ userId, username: fields.username }, reservation.state));
  }
  return usernameFieldsChanged(userId, fields);
}

/** Within a command that moves a user from one username to another: the new one claimed (refused when taken), the old one released. */
export async function moveUsernameReservation(unit: UnitOfWork, change: { userId: string; from: string | null; to: string | null }): Promise<void> {
  if (change.from === change.to) return;
  if (change.to !== null) {
    const claimed = await unit.load(streams.username(change.to), usernameReservationModel);
    unit.append(claimed.streamId, decideUsernameClaim({ userId: change.userId, username: change.to }, claimed.state));
  }
  if (change.from !== null) {
    const released = await unit.load(streams.username(change.from), usernameReservationModel);
    unit.append(released.streamId, decideUsernameRelease({ userId: change.userId, username: change.from }, released.state));
  }
}

/** Within the command that deletes a user: its username released, so the name can be taken again. */
export async function releaseUsernameOf(unit: UnitOfWork, userId: string): Promise<void> {
  const user = await unit.load(streams.user(userId), userModel);
  if (user.state.status !== 'registered' || user.state.username === null) return;
  await moveUsernameReservation(unit, { userId, from: user.state.username, to: null });
}
