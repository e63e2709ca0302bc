import { DomainError, emailReservationModel, streams, unbannedUser, type User } from '@portcullis/contracts';
import { generateId, hashPassword, loadStream, type RequestMetadata } from '@portcullis/platform';
import { registerUser } from '../identity/register-user.command.ts';
import { withUsernameFields } from '../identity/username-claim.ts';
import type { UsernameFields } from '../identity/username.decider.ts';
import type { CredentialsPorts } from './ports.ts';

export interface SignUp {
  /** Normalized, and checked for form by the caller, as the password's length is. */
  readonly email: string;
  readonly name: string;
  readonly image: string | undefined;
  readonly password: string;
  readonly callbackURL: string | undefined;
  readonly rememberMe: boolean;
  /** Checked and found free before (see prepareSignUpUsername); claimed in the registration's append. */
  readonly username: UsernameFields;
}

/** The answer, and the new session's token when sign-up signs in. */
export interface SignedUp {
  readonly token: string | null;
  readonly user: User;
}

/**
 * Sign-up of an address that is taken, while verification is required: better-auth answers as for a new
 * account (a user with a fresh id, no token), after the same password hashing, so neither the answer nor
 * its timing tells that the address has an account. Nothing is written and no mail is sent.
 */
function undisclosedSignUp(signUp: SignUp, now: Date): SignedUp {
  const at = now.toISOString();
  const user: User = {
    id: generateId(),
    email: signUp.email,
    name: signUp.name,
    image: signUp.image ?? null,
    emailVerified: false,
    createdAt: at,
    updatedAt: at,
    ...unbannedUser,
  };
  return withUsernameFields({ token: null, user }, signUp.username);
}

/**
 * sign-up: a new user with a password account, through the registration admin's create-user shares; a
 * verification mail when configured, and a session unless verification is required (better-auth opens none
 * until the address is verified). With required verification a taken address is not refused but answered
 * as a new one (the caller keeps the answer to a time floor, since a real registration takes longer).
 */
export async function signUpWithEmail(ports: CredentialsPorts, request: RequestMetadata, signUp: SignUp): Promise<SignedUp> {
  const undisclosed = ports.config.emailVerification.required;
  // A taken address is answered before any hashing, unless that would tell it is taken.
  const taken = (await loadStream(ports.store, streams.email(signUp.email), emailReservationModel)).state.status === 'reserved';
  if (taken && !undisclosed) throw new DomainError('USER_ALREADY_EXISTS');
  const passwordHash = await hashPassword(signUp.password, ports.config.password.argon2);
  const now = ports.clock();
  if (taken) return undisclosedSignUp(signUp, now);

  const userId = generateId();
  const { enabled, sendOnSignUp } = ports.config.emailVerification;
  const registered = await registerUser(ports, request, {
    via: 'sign-up',
    actor: { id: userId },
    registration: { userId, email: signUp.email, name: signUp.name, image: signUp.image ?? null, emailVerified: false, passwordHash, refusal: 'USER_ALREADY_EXISTS' },
    username: signUp.username,
    alsoOnUser: () => [],
    verificationMail: enabled && sendOnSignUp ? { callbackURL: signUp.callbackURL } : null,
    session: ports.config.signUpAutoSignIn && !undisclosed ? { rememberMe: signUp.rememberMe } : null,
    whenTaken: undisclosed ? 'undisclose' : 'refuse',
  });
  // Taken by a sign-up racing this one, between the read above and the append.
  if (!registered.registered) return undisclosedSignUp(signUp, now);
  return { token: registered.signIn?.token ?? null, user: registered.user };
}
