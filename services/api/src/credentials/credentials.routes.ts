import type { FastifyInstance } from 'fastify';
import { credentialsEndpoints as endpoints, DomainError, emailReservationModel, SignInFailed, streams } from '@portcullis/contracts';
import type { CredentialsPorts } from './ports.ts';
import { checkCallbackURL } from '../http/callback-url.ts';
import { route } from '../http/declared-route.ts';
import { withMinimumDuration } from '../http/equal-timing.ts';
import { requestMetadataOf } from '../http/request-context.ts';
import { setOpenedSessionCookies } from '../http/session-cookies.ts';
import { answerSignIn } from '../http/sign-in-answer.ts';
import { openSignInSession, signInWithPassword, type SignInIdentity } from '../identity/sign-in-with-password.command.ts';
import { checkNewPassword, checkPresentedPassword, normalizeEmail } from '../identity/password-policy.ts';
import { prepareSignUpUsername } from '../identity/username-claim.ts';
import { signUpWithEmail } from './sign-up.command.ts';

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
    unverified: 'EMAIL_NOT_VERIFIED',
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
      const username = await prepareSignUpUsername(ctx, body);
      // Where better-auth's handler refuses it: after the body, the origin and the username hook, before the email.
      if (ctx.config.disableSignUp) throw new DomainError('EMAIL_PASSWORD_SIGN_UP_DISABLED');
      const email = normalizeEmail(body.email);
      checkNewPassword(ctx.config, body.password);
      const rememberMe = body.rememberMe !== false;
      const signUp = () =>
        signUpWithEmail(ctx, requestMetadataOf(request), { email, name: body.name, image: body.image, password: body.password, callbackURL: body.callbackURL, rememberMe, username });
      // With required verification a taken address is answered like a new one, after the same hashing (as
      // better-auth does); but a new account is also appended and waited for until the read models have it,
      // which took milliseconds a duplicate did not, and told which addresses are registered. Both answer no
      // sooner than the floor.
      const signedUp = ctx.config.emailVerification.required ? await withMinimumDuration(UNDISCLOSED_SIGN_UP_FLOOR_MS, signUp) : await signUp();
      if (signedUp.token !== null) setOpenedSessionCookies(request, reply, ctx.cookies, signedUp.token, rememberMe);
      return signedUp;
    });

    route(app, endpoints.signInEmail, async (request, reply) => {
      const { body } = request;
      checkCallbackURL(body.callbackURL, trustedOrigins);
      const email = normalizeEmail(body.email);
      checkPresentedPassword(ctx.config, body.password);
      const opened = await signInWithPassword(ctx, requestMetadataOf(request), emailSignInIdentity(email), body.password, body.callbackURL, (signIn) =>
        openSignInSession(ctx, signIn, { ...body, method: 'email-password' }),
      );
      return answerSignIn(ctx.cookies, request, reply, opened);
    });
  };
}
