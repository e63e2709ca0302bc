import { z } from 'zod';
import { endpoint } from './endpoint.ts';
import { statusAnswerSchema, userSchema } from './user.ts';

// Schemas of the email lifecycle endpoints, as better-auth 1.7 declares them. Length bounds only keep
// absurd input out; password lengths are checked by the handlers (PASSWORD_TOO_SHORT/LONG), as better-auth does.
const url = z.string().max(2048);
const password = z.string().max(4096);
const token = z.string().max(4096);

const sendVerificationEmailBodySchema = z.object({ email: z.email().max(320), callbackURL: url.optional() });
const verifyEmailQuerySchema = z.object({ token, callbackURL: url.optional() });

const requestPasswordResetBodySchema = z.object({ email: z.email().max(320), redirectTo: url.optional() });
const resetPasswordCallbackQuerySchema = z.object({ callbackURL: url });
const resetPasswordBodySchema = z.object({ newPassword: password, token: token.optional() });
const resetPasswordQuerySchema = z.object({ token: token.optional() });

const changePasswordBodySchema = z.object({
  newPassword: password,
  currentPassword: password,
  revokeOtherSessions: z.boolean().optional(),
});
const verifyPasswordBodySchema = z.object({ password });
const setPasswordBodySchema = z.object({
  newPassword: password,
  userId: z.string().min(1).max(256).optional().meta({ description: 'The user a server call acts for (x-api-key)' }),
});

const changeEmailBodySchema = z.object({ newEmail: z.email().max(320), callbackURL: url.optional() });

/**
 * Both shapes better-auth has taken: `{providerId, accountId?}` (the spec's; accountId the provider's id of
 * the account) and 1.7's `{accountId}` (the account's own id, as list-accounts answers it).
 */
const unlinkAccountBodySchema = z
  .object({
    providerId: z.string().min(1).max(256).optional(),
    accountId: z.string().min(1).max(256).optional(),
  })
  .refine((body) => body.providerId !== undefined || body.accountId !== undefined, { message: 'providerId or accountId is required' });

const deleteUserBodySchema = z.object({ callbackURL: url.optional(), password: password.optional(), token: token.optional() });
const deleteUserCallbackQuerySchema = z.object({ token, callbackURL: url.optional() });
const deleteUserAnswerSchema = z.object({
  success: z.boolean(),
  message: z.enum(['User deleted', 'Verification email sent']),
});

const verifyEmailAnswerSchema = z.object({
  status: z.boolean(),
  user: userSchema.nullable().optional().meta({ description: 'The verified user; null when already verified, absent for a change-of-email confirmation' }),
});
const requestPasswordResetAnswerSchema = z.object({ status: z.boolean(), message: z.string() });
const changePasswordAnswerSchema = z.object({
  token: z.string().nullable().meta({ description: 'The new session\'s token when other sessions were revoked' }),
  user: userSchema,
});
const resetPasswordLinkParamsSchema = z.object({ token });

/**
 * One of the caller's linked accounts as better-auth 1.7 lists it: the account row without its secrets (the
 * password hash, provider tokens), its comma-separated scope as `scopes`, and `provider` beside `providerId`
 * for clients from before better-auth renamed it.
 */
const linkedAccountSchema = z.object({
  id: z.string(),
  providerId: z.string(),
  provider: z.string().meta({ description: 'The same as providerId, under the name older better-auth clients read' }),
  accountId: z.string(),
  userId: z.string(),
  scopes: z.array(z.string()),
  createdAt: z.string(),
  updatedAt: z.string(),
});
const listAccountsAnswerSchema = z.array(linkedAccountSchema);

const requestPasswordReset = {
  method: 'POST',
  summary: 'Mails a password reset link when the email is registered; answers the same either way',
  tag: 'Account',
  auth: 'public',
  body: requestPasswordResetBodySchema,
  answer: requestPasswordResetAnswerSchema,
} as const;

export const accountLifecycleEndpoints = {
  sendVerificationEmail: endpoint({
    operationId: 'sendVerificationEmail',
    method: 'POST',
    path: '/send-verification-email',
    summary: 'Mails an email verification link',
    tag: 'Account',
    auth: 'optional',
    body: sendVerificationEmailBodySchema,
    answer: statusAnswerSchema,
  }),
  verifyEmail: endpoint({
    operationId: 'verifyEmail',
    method: 'GET',
    path: '/verify-email',
    summary: 'Follows a verification (or change-of-email) link; redirects to callbackURL when given',
    tag: 'Account',
    auth: 'public',
    query: verifyEmailQuerySchema,
    answer: verifyEmailAnswerSchema,
    redirects: true,
  }),
  requestPasswordReset: endpoint({ operationId: 'requestPasswordReset', path: '/request-password-reset', ...requestPasswordReset }),
  forgetPassword: endpoint({ operationId: 'forgetPassword', path: '/forget-password', sameOperationAs: '/request-password-reset', ...requestPasswordReset }),
  resetPasswordCallback: endpoint({
    operationId: 'resetPasswordCallback',
    method: 'GET',
    path: '/reset-password/:token',
    summary: 'Follows a reset link: redirects to callbackURL with the token, or with error=INVALID_TOKEN',
    tag: 'Account',
    auth: 'public',
    params: resetPasswordLinkParamsSchema,
    query: resetPasswordCallbackQuerySchema,
    redirects: true,
  }),
  resetPassword: endpoint({
    operationId: 'resetPassword',
    method: 'POST',
    path: '/reset-password',
    summary: 'Sets a new password with a reset token, and ends every session of the user',
    tag: 'Account',
    auth: 'public',
    body: resetPasswordBodySchema,
    query: resetPasswordQuerySchema,
    answer: statusAnswerSchema,
  }),
  changePassword: endpoint({
    operationId: 'changePassword',
    method: 'POST',
    path: '/change-password',
    summary: 'Changes the caller\'s password, optionally ending their other sessions',
    tag: 'Account',
    auth: 'session',
    body: changePasswordBodySchema,
    answer: changePasswordAnswerSchema,
  }),
  verifyPassword: endpoint({
    operationId: 'verifyPassword',
    method: 'POST',
    path: '/verify-password',
    summary: 'Checks the caller\'s password',
    tag: 'Account',
    auth: 'session',
    body: verifyPasswordBodySchema,
    answer: statusAnswerSchema,
  }),
  setPassword: endpoint({
    operationId: 'setPassword',
    method: 'POST',
    path: '/set-password',
    summary: 'Server call: sets a first password for a user who has none',
    tag: 'Account',
    auth: 'server',
    body: setPasswordBodySchema,
    answer: statusAnswerSchema,
  }),
  changeEmail: endpoint({
    operationId: 'changeEmail',
    method: 'POST',
    path: '/change-email',
    summary: 'Starts a change of the caller\'s email: mails a confirmation link',
    tag: 'Account',
    auth: 'session',
    body: changeEmailBodySchema,
    answer: statusAnswerSchema,
  }),
  listAccounts: endpoint({
    operationId: 'listUserAccounts',
    method: 'GET',
    path: '/list-accounts',
    summary: 'The accounts linked to the caller: the password one and each provider\'s, never their tokens',
    tag: 'Account',
    auth: 'session',
    answer: listAccountsAnswerSchema,
  }),
  unlinkAccount: endpoint({
    operationId: 'unlinkAccount',
    method: 'POST',
    path: '/unlink-account',
    summary: 'Unlinks one of the caller\'s accounts, never the last one (a fresh session is required)',
    tag: 'Account',
    auth: 'session',
    body: unlinkAccountBodySchema,
    answer: statusAnswerSchema,
  }),
  deleteUser: endpoint({
    operationId: 'deleteUser',
    method: 'POST',
    path: '/delete-user',
    summary: 'Deletes the caller\'s account (with a password or fresh session), or mails a confirmation link',
    tag: 'Account',
    auth: 'session',
    body: deleteUserBodySchema,
    answer: deleteUserAnswerSchema,
  }),
  deleteUserCallback: endpoint({
    operationId: 'deleteUserCallback',
    method: 'GET',
    path: '/delete-user/callback',
    summary: 'Follows a deletion confirmation link; redirects to callbackURL when given',
    tag: 'Account',
    auth: 'session',
    query: deleteUserCallbackQuerySchema,
    answer: deleteUserAnswerSchema,
    redirects: true,
  }),
};
