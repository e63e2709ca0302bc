import type { FastifyInstance } from 'fastify';
import { credentialsEndpoints as endpoints, DomainError, SignInFailed, streams, unbannedUser, type User } from '@portcullis/contracts';
import { generateId, hashPassword, loadStream } from '@portcullis/platform';
import type { CredentialsPorts } from './ports.ts';
import { checkCallbackURL } from '../http/callback-url.ts';
import { route } from '../http/declared-route.ts';
import { withMinimumDuration } from '../http/equal-timing.ts';
import { requestMetadataOf } from '../http/request-context.ts';
import { clearDontRemember, setSessionCookie } from '../http/session-cookies.ts';
import { unverifiedEmailRefuses } from '../identity/account-model.ts';
import { emailReservationModel } from '@portcullis/contracts';
import { answerSignIn, openSignInSession, signInWithPassword, type SignInIdentity } from '../identity/password-sign-in.ts';
import { checkNewPassword, checkPresentedPassword, normalizeEmail } from '../identity/password-policy.ts';
import { registerUser } from '../identity/register-user.command.ts';
import { prepareSignUpUsername, withUsernameFields } from '../identity/username-claim.ts';

/**
 * Sign-ups with required verification answer no sooner than this: well above what hashing the password,
 * the append and the wait for the read models cost, as the floor of password-reset requests is.
 */
const UNDISCLOSED_SIGN_UP_FLOOR_MS = 400;

/** Sign-in by email: failures and locks on `sign-in-<email>`, the account found by the email's reservation. */
function emailSignInIdentity(email: string): SignInIdentity {
  return {
    identifier: email,
    guardStream: streams.signIn(email),
    reservationStream: streams.email(email),
    reservationModel: emailReservationModel,
    failure: (reason, userId) => SignInFailed({ email, userId, reason }),
    via: 'email',
    refusal: 'INVALID_EMAIL_OR_PASSWORD',
  };
}

/**
 * Sign-up of an address that is taken, while verification is required: better-auth answers as for a new
 * account (a user with a fresh id, no token), after the same password hashing, so neither the answer nor
 * its timing tells that the address has an account. Nothing is written and no mail is sent.
 */
function undisclosedSignUp(body: { name: string; image?: string | undefined }, email: string, now: Date): { token: null; user: User } {
  const at = now.toISOString();
  return {
    token: null,
    user: { id: generateId(), email, name: body.name, image: body.image ?? null, emailVerified: false, createdAt: at, updatedAt: at, ...unbannedUser },
  };
}

export function credentialsRoutes(ctx: CredentialsPorts) {
  // The base URL's origin and TRUSTED_ORIGINS; the perimeter checks the same before the handler runs.
  const trustedOrigins = ctx.config.trustedOrigins;
  return async function register(app: FastifyInstance): Promise<void> {
    route(app, endpoints.signUpEmail, async (request, reply) => {
      const { body } = request;
      checkCallbackURL(body.callbackURL, trustedOrigins);
      // Before the email checks, as better-auth's username plugin runs in a hook before the handler.
      const usernameFields = await prepareSignUpUsername(ctx, body);
      const email = normalizeEmail(body.email);
      checkNewPassword(ctx.config, body.password);
      const undisclosed = ctx.config.emailVerification.required;

      const signUpAccount = async () => {
        // A taken address is answered before any hashing, unless that would tell it is taken.
        const taken = (await loadStream(ctx.store, streams.email(email), emailReservationModel)).state.status === 'reserved';
        if (taken && !undisclosed) throw new DomainError('USER_ALREADY_EXISTS');
        const passwordHash = await hashPassword(body.password);
        const now = ctx.clock();
        if (taken) return withUsernameFields(undisclosedSignUp(body, email, now), usernameFields);

        const userId = generateId();
        const rememberMe = body.rememberMe !== false;
        const { enabled, sendOnSignUp } = ctx.config.emailVerification;
        const registered = await registerUser(ctx, requestMetadataOf(request), {
          via: 'sign-up',
          actor: { id: userId },
          registration: { userId, email, name: body.name, image: body.image ?? null, emailVerified: false, passwordHash, refusal: 'USER_ALREADY_EXISTS' },
          username: usernameFields,
          alsoOnUser: () => [],
          verificationMail: enabled && sendOnSignUp ? { callbackURL: body.callbackURL } : null,
          // With required verification, better-auth opens no session until the email is verified.
          session: ctx.config.signUpAutoSignIn && !undisclosed ? { rememberMe } : null,
          whenTaken: undisclosed ? 'undisclose' : 'refuse',
        });
        if (!registered.registered) return withUsernameFields(undisclosedSignUp(body, email, now), usernameFields);
        if (!registered.signIn) return { token: null, user: registered.user };
        if (rememberMe) clearDontRemember(request, reply, ctx.cookies);
        setSessionCookie(reply, ctx.cookies, registered.signIn.token, { dontRemember: !rememberMe });
        return { token: registered.signIn.token, user: registered.user };
      };
      // With required verification a taken address is answered like a new one, after the same hashing (as
      // better-auth does); but a new account is also appended and waited for until the read models have it,
      // which took milliseconds a duplicate did not, and told which addresses are registered. Both answer no
      // sooner than the floor.
      if (!undisclosed) return signUpAccount();
      return withMinimumDuration(UNDISCLOSED_SIGN_UP_FLOOR_MS, signUpAccount);
    });

    route(app, endpoints.signInEmail, async (request, reply) => {
      const { body } = request;
      checkCallbackURL(body.callbackURL, trustedOrigins);
      const email = normalizeEmail(body.email);
      checkPresentedPassword(ctx.config, body.password);
      const opened = await signInWithPassword(ctx, request, reply, emailSignInIdentity(email), body.password, async (signIn) => {
        if (await unverifiedEmailRefuses(signIn.unit, ctx, signIn.account, body.callbackURL)) return { refusal: 'EMAIL_NOT_VERIFIED' };
        return openSignInSession(ctx, signIn, { ...body, method: 'email-password' });
      });
      return answerSignIn(ctx, request, reply, opened);
    });
  };
}
