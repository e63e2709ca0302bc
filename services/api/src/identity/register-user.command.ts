import { DomainError, evolveUserAnswer, streams, type ActorKind, type DomainEvent, type User } from '@portcullis/contracts';
import { generateId, type RequestMetadata, type UnitOfWork } from '@portcullis/platform';
import type { IdentityPorts } from './ports.ts';
import { newSession } from '../session/new-session.ts';
import { openSession, type NewSession, type SessionOpening } from '../session/session-lifecycle.ts';
import { emailReservationIn, queueVerificationMail } from './account-model.ts';
import { decideRegistration, type Registration } from './registration.decider.ts';
import { linkProviderAccountIn, type NewProviderAccount } from './provider-accounts.ts';
import { claimSignUpUsername } from './username-claim.ts';
import type { UsernameFields } from './username.decider.ts';
import { countSignUp } from './sign-up-count.ts';

/** What registering a user runs on. */
export type RegisterUserPorts = Pick<IdentityPorts, 'commands' | 'config'>;

/**
 * A new user, whoever registers them: sign-up (`sign-up`) or an admin (`admin.create-user`). The checks that
 * need configuration or time (the email's form, the password's length and hash, the username's rules) are
 * the caller's; this decides and appends, in one atomic append, the address's reservation (a parallel
 * registration with it loses here, and nothing of it is written), the username's, the user with their
 * password account, what the caller adds on the user's stream, the verification mail and the first session.
 */
export interface RegisterUser {
  readonly via: 'sign-up' | 'admin.create-user' | 'admin.bootstrap';
  readonly actor: { readonly id: string; readonly kind?: ActorKind };
  readonly registration: Omit<Registration, 'credential'> & { readonly passwordHash: string | null };
  readonly username: UsernameFields;
  /** Further facts on the new user's stream, after the registration's (an admin's role or ban). */
  readonly alsoOnUser: (userId: string) => readonly DomainEvent[];
  readonly verificationMail: { readonly callbackURL: string | undefined } | null;
  readonly session: { readonly rememberMe: boolean; readonly method?: SessionOpening; readonly providerId?: string } | null;
  /** A taken address is refused, or (sign-up with required verification) answered as registered, writing nothing. */
  readonly whenTaken: 'refuse' | 'undisclose';
}

export type RegisteredUser =
  | { readonly registered: false }
  | { readonly registered: true; readonly user: User; readonly signIn: { readonly token: string; readonly session: NewSession } | null };

export async function registerUser(ports: RegisterUserPorts, request: RequestMetadata, command: RegisterUser): Promise<RegisteredUser> {
  const { result } = await ports.commands.handle(
    {
      name: command.via,
      request,
      actorId: command.actor.id,
      ...(command.actor.kind ? { actorKind: command.actor.kind } : {}),
      serialize: [streams.email(command.registration.email)],
    },
    (unit) => registerUserIn(unit, ports, request, command),
  );
  if (command.via === 'sign-up' && result.registered) countSignUp('email');
  return result;
}

/** The registration within a command that decides more around it (a social sign-in's link and session). */
export async function registerUserIn(
  unit: UnitOfWork,
  ports: Pick<IdentityPorts, 'config'>,
  request: RequestMetadata,
  command: Omit<RegisterUser, 'via' | 'actor'> & { readonly providerAccount?: NewProviderAccount },
): Promise<RegisteredUser> {
  const { registration } = command;
  const { userId, email } = registration;
  const reservation = await emailReservationIn(unit, email);
  if (reservation.state.status === 'reserved' && command.whenTaken === 'undisclose') return { registered: false };
  const credential = registration.passwordHash === null ? null : { accountId: generateId(), passwordHash: registration.passwordHash };
  const decided = decideRegistration({ ...registration, credential }, reservation.state);
  unit.append(reservation.streamId, decided.reservation);
  const link = command.providerAccount ? await linkProviderAccountIn(unit, userId, command.providerAccount) : null;
  // Decided on the claim a moment ago: another user holding it now is a race the caller re-decides.
  if (link && link.outcome !== 'linked') throw new DomainError('CONFLICT');
  const linked = link ? link.userEvents : [];
  const userEvents = [...decided.user, ...linked, ...(await claimSignUpUsername(unit, command.username, userId)), ...command.alsoOnUser(userId)];
  unit.append(streams.user(userId), userEvents, { expected: 'no_stream' });
  if (command.verificationMail) {
    await queueVerificationMail(unit, ports, { userId, email, name: registration.name }, command.verificationMail.callbackURL);
  }
  // The answer's times are the registration's own, as every later answer folds them from the log.
  const user = userEvents.reduce<User | null>((folded, event) => evolveUserAnswer(folded, event, unit.now.toISOString()), null)!;
  if (!command.session) return { registered: true, user, signIn: null };
  const signIn = newSession(ports, request, unit.now, command.session.rememberMe);
  openSession(unit, userId, signIn.session, command.session.method ?? 'sign-up', command.session.providerId ?? null);
  return { registered: true, user, signIn };
}
