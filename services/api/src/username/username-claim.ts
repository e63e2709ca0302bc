import { DomainError, type DomainEvent, type EventMetadata, normalizeUsername, streams, type User, type UsernameBounds, usernameProblem } from '@portcullis/contracts';
import { WrongExpectedVersionError, type StreamWrite } from '@portcullis/platform';
import type { ApiContext } from '../context.ts';
import { evolveUser, initialUserState } from '../identity/user.decider.ts';
import { loadStream, streamWrite, type Loaded } from '../write-model.ts';
import {
  decideUsernameClaim,
  decideUsernameRelease,
  evolveUsernameReservation,
  initialUsernameFields,
  initialUsernameReservation,
  usernameFieldsChanged,
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

export function loadUsernameReservation(ctx: ApiContext, username: string): Promise<Loaded<UsernameReservationState>> {
  return loadStream(ctx.store, usernameReservationStream(username), evolveUsernameReservation, initialUsernameReservation);
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

/** A sign-up's username, checked and with its reservation loaded, before anything is decided. */
export interface SignUpUsername {
  readonly fields: UsernameFields;
  readonly reservation: { readonly streamId: string; readonly loaded: Loaded<UsernameReservationState> } | null;
}

/**
 * better-auth's sign-up hooks: a display username that is a valid username stands in for a missing
 * username; a username is checked against the rules and must be free (it is claimed atomically later).
 */
export async function prepareSignUpUsername(
  ctx: ApiContext,
  body: { username?: string | undefined; displayUsername?: string | undefined },
): Promise<SignUpUsername> {
  let username = body.username;
  if (username === undefined && body.displayUsername !== undefined && !usernameProblem(body.displayUsername, ctx.config.username)) {
    username = body.displayUsername;
  }
  if (username === undefined) return { fields: initialUsernameFields(body), reservation: null };
  checkUsername(ctx.config.username, username);
  const loaded = await loadUsernameReservation(ctx, username);
  if (loaded.state.status === 'reserved') throw new DomainError('USERNAME_IS_ALREADY_TAKEN');
  return {
    fields: initialUsernameFields({ username, displayUsername: body.displayUsername }),
    reservation: { streamId: usernameReservationStream(username), loaded },
  };
}

/** The reservation write (first, so a lost race is reported as the username's) and the user-stream events. */
export function claimSignUpUsername(
  prepared: SignUpUsername,
  userId: string,
  metadata: EventMetadata,
): { readonly writes: StreamWrite[]; readonly userEvents: DomainEvent[] } {
  const userEvents = usernameFieldsChanged(userId, prepared.fields);
  if (!prepared.reservation || prepared.fields.username === null) return { writes: [], userEvents };
  const { streamId, loaded } = prepared.reservation;
  const reserved = decideUsernameClaim({ userId, username: prepared.fields.username }, loaded.state);
  return { writes: [streamWrite(streamId, loaded.version, reserved, metadata)], userEvents };
}

/** A racing sign-up reserved the username between our read and our append. */
export function lostUsernameRace(error: unknown, prepared: SignUpUsername): boolean {
  return error instanceof WrongExpectedVersionError && error.streamId === prepared.reservation?.streamId;
}

/**
 * The reservation writes for a user moving from one username to another, for the same append as the user's
 * event: the new one claimed (refused when taken), the old one released.
 */
export async function usernameChangeWrites(
  ctx: ApiContext,
  change: { userId: string; from: string | null; to: string | null },
  metadata: EventMetadata,
): Promise<StreamWrite[]> {
  if (change.from === change.to) return [];
  const writes: StreamWrite[] = [];
  if (change.to !== null) {
    const loaded = await loadUsernameReservation(ctx, change.to);
    const events = decideUsernameClaim({ userId: change.userId, username: change.to }, loaded.state);
    writes.push(streamWrite(streams.username(change.to), loaded.version, events, metadata));
  }
  if (change.from !== null) {
    const loaded = await loadUsernameReservation(ctx, change.from);
    const events = decideUsernameRelease({ userId: change.userId, username: change.from }, loaded.state);
    writes.push(streamWrite(streams.username(change.from), loaded.version, events, metadata));
  }
  return writes;
}

/** The release of a user's username, for the append that deletes the user: a deleted user holds no name. */
export async function usernameReleaseWrites(ctx: ApiContext, userId: string, metadata: EventMetadata): Promise<StreamWrite[]> {
  const { state } = await loadStream(ctx.store, streams.user(userId), evolveUser, initialUserState);
  if (state.status !== 'registered' || state.username === null) return [];
  return usernameChangeWrites(ctx, { userId, from: state.username, to: null }, metadata);
}
