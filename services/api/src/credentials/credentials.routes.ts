import type { FastifyInstance } from 'fastify';
import { credentialsEndpoints as endpoints, DomainError, SignInFailed, streams, type User } from '@portcullis/contracts';
import { generateId, hashPassword, WrongExpectedVersionError } from '@portcullis/platform';
import { commit } from '../commit.ts';
import type { ApiContext } from '../context.ts';
import { checkCallbackURL } from '../http/callback-url.ts';
import { withMinimumDuration } from '../http/equal-timing.ts';
import { eventMetadata, requestMetadataOf } from '../http/request-context.ts';
import { clearDontRemember, setSessionCookie } from '../http/session-cookies.ts';
import { route } from '../http/declared-route.ts';
import { loadStream, streamWrite } from '../write-model.ts';
import {
  claimSignUpUsername,
  lostUsernameRace,
  prepareSignUpUsername,
  usernameAnswerFields,
  withUsernameFields,
} from '../username/username-claim.ts';
import { enforceVerifiedEmail, undisclosedSignUp, verificationMailWrite } from '../identity/account-model.ts';
import { newSession } from '../session/new-session.ts';
import { openSignInSession, reservationHolder, signInWithPassword, type SignInIdentity } from '../identity/password-sign-in.ts';
import { checkNewPassword, checkPresentedPassword, normalizeEmail } from '../identity/password-policy.ts';
import { evolveEmailReservation, initialEmailReservation } from '../identity/email-reservation.decider.ts';
import { decideRegistration } from './registration.decider.ts';

/**
 * Sign-ups with required verification answer no sooner than this: well above what hashing the password,
 * the append and the wait for the read models cost, as the floor of password-reset requests is.
 */
const UNDISCLOSED_SIGN_UP_FLOOR_MS = 400;

/** Sign-in by email: failures and locks on `sign-in-<email>`, the account found by the email's reservation. */
export function emailSignInIdentity(ctx: ApiContext, email: string): SignInIdentity {
  return {
    identifier: email,
    guardStream: streams.signIn(email),
    reservationStream: streams.email(email),
    reservedFor: reservationHolder(evolveEmailReservation, initialEmailReservation),
    failure: (reason, userId) => SignInFailed({ email, userId, reason }),
    via: 'email',
    refusal: 'INVALID_EMAIL_OR_PASSWORD',
  };
}

export function credentialsRoutes(ctx: ApiContext) {
  // The base URL's origin and TRUSTED_ORIGINS; the perimeter checks the same before the handler runs.
  const trustedOrigins = ctx.config.trustedOrigins;
  return async function register(app: FastifyInstance): Promise<void> {
    route(app, endpoints.signUpEmail, async (request, reply) => {
      const { body } = request;
      checkCallbackURL(body.callbackURL, trustedOrigins);
      // Before the email checks, as better-auth's username plugin runs in a hook before the handler.
      const username = await prepareSignUpUsername(ctx, body);
      const email = normalizeEmail(body.email);
      checkNewPassword(ctx.config, body.password);

      const signUpAccount = async () => {
        const reservationStream = streams.email(email);
        const reservation = await loadStream(ctx.store, reservationStream, evolveEmailReservation, initialEmailReservation);
        if (reservation.state.status === 'reserved') {
          // With required verification better-auth answers a taken address like a new one (no enumeration).
          if (ctx.config.emailVerification.required) {
            return withUsernameFields(await undisclosedSignUp(body, email, ctx.clock()), username.fields);
          }
          throw new DomainError('USER_ALREADY_EXISTS');
        }

        const now = ctx.clock();
        const userId = generateId();
        const rememberMe = body.rememberMe !== false;
        // With required verification, better-auth opens no session until the email is verified.
        const autoSignIn = ctx.config.signUpAutoSignIn && !ctx.config.emailVerification.required;
        const signIn = autoSignIn ? newSession(ctx, requestMetadataOf(request), now, rememberMe) : null;
        const events = decideRegistration(
          {
            userId,
            accountId: generateId(),
            email,
            name: body.name,
            image: body.image ?? null,
            passwordHash: await hashPassword(body.password),
            session: signIn?.session ?? null,
          },
          reservation.state,
        );
        const metadata = eventMetadata(request, now, userId);
        const claimed = claimSignUpUsername(username, userId, metadata);
        try {
          // One atomic append: the reservation (expected at the version we decided on), the user and the
          // session. A parallel sign-up with the same email loses here, and nothing of it is written.
          const { enabled, sendOnSignUp } = ctx.config.emailVerification;
          const verificationMail =
            enabled && sendOnSignUp ? [await verificationMailWrite(ctx, { userId, email, name: body.name }, body.callbackURL, now, metadata)] : [];
          await commit(ctx, [
            ...verificationMail,
            ...claimed.writes,
            streamWrite(reservationStream, reservation.version, events.reservation, metadata),
            streamWrite(streams.user(userId), 'no_stream', [...events.user, ...claimed.userEvents], metadata),
            ...(signIn && events.session
              ? [
                  streamWrite(streams.session(signIn.session.sessionId), 'no_stream', [events.session.session], metadata),
                  streamWrite(streams.userSessions(userId), 'no_stream', [events.session.index], metadata),
                ]
              : []),
          ]);
        } catch (error) {
          if (lostUsernameRace(error, username)) throw new DomainError('USERNAME_IS_ALREADY_TAKEN');
          if (error instanceof WrongExpectedVersionError && error.streamId === reservationStream) {
            if (ctx.config.emailVerification.required) {
              return withUsernameFields(await undisclosedSignUp(body, email, now, { hashed: true }), username.fields);
            }
            throw new DomainError('USER_ALREADY_EXISTS');
          }
          throw error;
        }

        const user: User = {
          id: userId,
          email,
          name: body.name,
          image: body.image ?? null,
          emailVerified: false,
          createdAt: now.toISOString(),
          updatedAt: now.toISOString(),
          ...usernameAnswerFields(username.fields),
        };
        if (!signIn) return { token: null, user };
        if (rememberMe) clearDontRemember(request, reply, ctx.cookies);
        setSessionCookie(reply, ctx.cookies, signIn.token, { dontRemember: !rememberMe });
        return { token: signIn.token, user };
      };
      // With required verification a taken address is answered like a new one, after the same hashing (as
      // better-auth does); but a new account is also appended and waited for until the read models have it,
      // which took milliseconds a duplicate did not, and told which addresses are registered. Both answer no
      // sooner than the floor.
      if (!ctx.config.emailVerification.required) return signUpAccount();
      return withMinimumDuration(UNDISCLOSED_SIGN_UP_FLOOR_MS, signUpAccount);
    });

    route(app, endpoints.signInEmail, async (request, reply) => {
      const { body } = request;
      checkCallbackURL(body.callbackURL, trustedOrigins);
      const email = normalizeEmail(body.email);
      checkPresentedPassword(ctx.config, body.password);
      return signInWithPassword(ctx, request, reply, emailSignInIdentity(ctx, email), body.password, async (signIn) => {
        await enforceVerifiedEmail(ctx, request, signIn.account, body.callbackURL);
        return openSignInSession(ctx, request, reply, signIn, { ...body, method: 'email-password' });
      });
    });
  };
}
