import { z } from 'zod';

// Schemas of the email lifecycle endpoints, as better-auth 1.7 declares them. Length bounds only keep
// absurd input out; password lengths are checked by the handlers (PASSWORD_TOO_SHORT/LONG), as better-auth does.
const url = z.string().max(2048);
const password = z.string().max(4096);
const token = z.string().max(4096);

export const sendVerificationEmailBodySchema = z.object({ email: z.email().max(320), callbackURL: url.optional() });
export const verifyEmailQuerySchema = z.object({ token, callbackURL: url.optional() });

export const requestPasswordResetBodySchema = z.object({ email: z.email().max(320), redirectTo: url.optional() });
export const resetPasswordCallbackQuerySchema = z.object({ callbackURL: url });
export const resetPasswordBodySchema = z.object({ newPassword: password, token: token.optional() });
export const resetPasswordQuerySchema = z.object({ token: token.optional() });

export const changePasswordBodySchema = z.object({
  newPassword: password,
  currentPassword: password,
  revokeOtherSessions: z.boolean().optional(),
});
export const verifyPasswordBodySchema = z.object({ password });
export const setPasswordBodySchema = z.object({
  newPassword: password,
  userId: z.string().min(1).max(256).optional().meta({ description: 'The user a server call acts for (x-api-key)' }),
});

export const changeEmailBodySchema = z.object({ newEmail: z.email().max(320), callbackURL: url.optional() });

export const deleteUserBodySchema = z.object({ callbackURL: url.optional(), password: password.optional(), token: token.optional() });
export const deleteUserCallbackQuerySchema = z.object({ token, callbackURL: url.optional() });
export const deleteUserAnswerSchema = z.object({
  success: z.boolean(),
  message: z.enum(['User deleted', 'Verification email sent']),
});
