import { z } from 'zod';
import { endpoint } from './endpoint.ts';
import { userSchema } from './user.ts';

// Social sign-in as better-auth 1.7 declares it (spec sections 3, 7 and 8). Length bounds keep absurd input out.
const url = z.string().max(2048);
const providerId = z.string().min(1).max(64);
const scopes = z.array(z.string().min(1).max(256)).max(64);
const jwt = z.string().min(1).max(16_384);

/** Apple gives the name only to the app, on the first sign-in; the callback carries it as JSON text. */
export const providerUserSchema = z.object({
  name: z.object({ firstName: z.string().max(256).optional(), lastName: z.string().max(256).optional() }).optional(),
  email: z.string().max(320).optional(),
});
export type ProviderUser = z.infer<typeof providerUserSchema>;

const idTokenSchema = z.object({
  token: jwt,
  nonce: z.string().max(512).optional(),
  accessToken: z.string().max(16_384).optional(),
  refreshToken: z.string().max(16_384).optional(),
  expiresAt: z.number().optional(),
  user: providerUserSchema.optional(),
});
/** An id token a client got from the provider itself, as sign-in/social and link-social take it. */
export type PresentedIdToken = z.infer<typeof idTokenSchema>;

const signInSocialBodySchema = z.object({
  provider: providerId,
  callbackURL: url.optional(),
  newUserCallbackURL: url.optional(),
  errorCallbackURL: url.optional(),
  disableRedirect: z.boolean().optional(),
  idToken: idTokenSchema.optional(),
  scopes: scopes.optional(),
  requestSignUp: z.boolean().optional(),
  loginHint: z.string().max(320).optional(),
});

/** The redirect branch (`url`, `redirect`) or the id-token branch (`token`, `user`), as better-auth answers either. */
const signInSocialAnswerSchema = z.object({
  redirect: z.boolean(),
  url: z.string().optional(),
  token: z.string().optional(),
  user: userSchema.optional(),
});

const callbackParamsSchema = z.object({ id: z.string().max(256) });
/**
 * What a provider brings back. The route takes any fields and parses these itself: input it cannot read is
 * answered as better-auth answers it, with a redirect (`error=invalid_callback_request`), never JSON.
 */
export const callbackFieldsSchema = z.object({
  code: z.string().max(4096).optional(),
  state: z.string().max(512).optional(),
  error: z.string().max(512).optional(),
  error_description: z.string().max(2048).optional(),
  device_id: z.string().max(512).optional(),
  /** Apple's first-sign-in user, as JSON text. */
  user: z.string().max(4096).optional(),
  /** RFC 9207's issuer identifier. */
  iss: z.string().max(2048).optional(),
});

/** As the route takes them: every field named, none refused before the handler parses them with the schema above. */
const callbackFieldsTaken = z.object(
  Object.fromEntries(Object.keys(callbackFieldsSchema.shape).map((name) => [name, z.unknown().optional()])) as Record<
    keyof typeof callbackFieldsSchema.shape,
    z.ZodOptional<z.ZodUnknown>
  >,
);

const linkSocialBodySchema = z.object({
  provider: providerId,
  callbackURL: url.optional(),
  errorCallbackURL: url.optional(),
  scopes: scopes.optional(),
  idToken: idTokenSchema.optional(),
  disableRedirect: z.boolean().optional(),
});
const linkSocialAnswerSchema = z.object({ url: z.string(), redirect: z.boolean(), status: z.boolean().optional() });

/**
 * Both selections better-auth has taken: 1.7's `{accountId}` (the account's own id) and `{providerId,
 * accountId?}` (the provider's id of the account); `userId` for a server call acting for a user.
 */
const accountSelectionSchema = z
  .object({
    providerId: providerId.optional(),
    accountId: z.string().min(1).max(256).optional(),
    userId: z.string().min(1).max(256).optional(),
  })
  .refine((body) => body.providerId !== undefined || body.accountId !== undefined, { message: 'providerId or accountId is required' });

const accessTokenAnswerSchema = z.object({
  accessToken: z.string().optional(),
  accessTokenExpiresAt: z.string().optional(),
  scopes: z.array(z.string()),
  idToken: z.string().optional(),
});

const refreshTokenAnswerSchema = z.object({
  accessToken: z.string().optional(),
  refreshToken: z.string().optional(),
  accessTokenExpiresAt: z.string().optional(),
  refreshTokenExpiresAt: z.string().optional(),
  scope: z.string().nullable().optional(),
  idToken: z.string().optional(),
  providerId: z.string(),
  accountId: z.string(),
});

const accountInfoQuerySchema = z.object({
  accountId: z.string().min(1).max(256).optional(),
  userId: z.string().min(1).max(256).optional().meta({ description: 'The user a server call acts for (x-api-key)' }),
});
const accountInfoAnswerSchema = z.object({
  user: z.object({
    id: z.string(),
    name: z.string().optional(),
    email: z.string().nullable().optional(),
    image: z.string().nullable().optional(),
    emailVerified: z.boolean(),
  }),
  data: z.record(z.string(), z.unknown()),
  /** better-auth 1.7's account key: which account the answer is about. */
  account: z.object({ id: z.string(), providerId: z.string(), issuer: z.string().nullable(), accountId: z.string() }),
});

export const socialEndpoints = {
  signInSocial: endpoint({
    operationId: 'socialSignIn',
    method: 'POST',
    path: '/sign-in/social',
    summary: "Starts a provider's sign-in (an authorization URL), or signs in with the provider's id token",
    tag: 'Social',
    auth: 'public',
    body: signInSocialBodySchema,
    answer: signInSocialAnswerSchema,
  }),
  callback: endpoint({
    operationId: 'handleOAuthCallback',
    method: ['GET', 'POST'],
    path: '/callback/:id',
    summary: "The provider's redirect back: signs in (or links), then redirects to the flow's callback URL or its error URL",
    tag: 'Social',
    auth: 'public',
    params: callbackParamsSchema,
    query: callbackFieldsTaken,
    body: callbackFieldsTaken.optional(),
    redirects: true,
  }),
  linkSocial: endpoint({
    operationId: 'linkSocialAccount',
    method: 'POST',
    path: '/link-social',
    summary: "Links a provider's account to the caller: an authorization URL, or at once with an id token",
    tag: 'Social',
    auth: 'session',
    body: linkSocialBodySchema,
    answer: linkSocialAnswerSchema,
  }),
  getAccessToken: endpoint({
    operationId: 'getAccessToken',
    method: 'POST',
    path: '/get-access-token',
    summary: "A provider account's access token, refreshed first when it has expired",
    tag: 'Social',
    auth: 'session-or-server',
    body: accountSelectionSchema,
    answer: accessTokenAnswerSchema,
  }),
  refreshToken: endpoint({
    operationId: 'refreshToken',
    method: 'POST',
    path: '/refresh-token',
    summary: "Refreshes a provider account's tokens",
    tag: 'Social',
    auth: 'session-or-server',
    body: accountSelectionSchema,
    answer: refreshTokenAnswerSchema,
  }),
  accountInfo: endpoint({
    operationId: 'accountInfo',
    method: 'GET',
    path: '/account-info',
    summary: "What the provider says now about one of the caller's accounts (its own answer in `data`)",
    tag: 'Social',
    auth: 'session-or-server',
    query: accountInfoQuerySchema,
    answer: accountInfoAnswerSchema,
  }),
};
