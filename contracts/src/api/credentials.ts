import { z } from 'zod';
import { userSchema } from './user.ts';
import { displayUsernameInputSchema, imageUrlSchema } from './user-fields.ts';
import { endpoint } from './endpoint.ts';

// Shape checks only: the email syntax check answers INVALID_EMAIL and the password length check answers
// PASSWORD_TOO_SHORT/LONG from the handler, as better-auth does, because their bounds are configuration.
const bounded = (max: number) => z.string().max(max);

const signUpEmailBodySchema = z.object({
  name: bounded(256),
  email: bounded(320),
  password: bounded(4096),
  image: imageUrlSchema.optional(),
  callbackURL: bounded(2048).optional(),
  rememberMe: z.boolean().optional(),
  username: bounded(1024).optional(),
  displayUsername: displayUsernameInputSchema.optional(),
});

const signInEmailBodySchema = z.object({
  email: bounded(320),
  password: bounded(4096),
  callbackURL: bounded(2048).optional(),
  rememberMe: z.boolean().optional(),
});

const signUpAnswerSchema = z.object({ token: z.string().nullable(), user: userSchema });

const signInAnswerSchema = z.object({
  redirect: z.boolean(),
  token: z.string(),
  url: z.string().optional(),
  user: userSchema,
});

export const signOutAnswerSchema = z.object({ success: z.boolean() });

/** better-auth's email check: a pragmatic address syntax, not the full RFC 5322 grammar. */
const emailSchema = z.email();

export function isValidEmail(email: string): boolean {
  // Built once: constructing a zod schema costs more than the check itself, on every sign-in and sign-up.
  return emailSchema.safeParse(email).success;
}

export const credentialsEndpoints = {
  signUpEmail: endpoint({
    operationId: 'signUpEmail',
    method: 'POST',
    path: '/sign-up/email',
    summary: 'Registers a user with an email and password, and signs them in unless verification is required',
    tag: 'Credentials',
    auth: 'public',
    body: signUpEmailBodySchema,
    answer: signUpAnswerSchema,
  }),
  signInEmail: endpoint({
    operationId: 'signInEmail',
    method: 'POST',
    path: '/sign-in/email',
    summary: 'Signs in with an email and password; sets the session cookie',
    tag: 'Credentials',
    auth: 'public',
    body: signInEmailBodySchema,
    answer: signInAnswerSchema,
  }),
};
