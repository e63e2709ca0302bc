import { z } from 'zod';
import { userSchema } from './user.ts';
import { endpoint } from './endpoint.ts';

/**
 * Shape checks only: length and alphabet are answered from the handler as USERNAME_TOO_SHORT/TOO_LONG and
 * INVALID_USERNAME, as better-auth's username plugin does, because the bounds are configuration. The bound
 * here only keeps absurd input out.
 */
const usernameInputSchema = z.string().max(1024).meta({ description: 'The username, in any letter case' });

const signInUsernameBodySchema = z
  .object({
    username: usernameInputSchema,
    password: z.string().max(4096),
    rememberMe: z.boolean().optional(),
    callbackURL: z.string().max(2048).optional(),
  })
  .meta({ description: 'POST /sign-in/username' });

const isUsernameAvailableBodySchema = z
  .object({ username: usernameInputSchema })
  .meta({ description: 'POST /is-username-available' });

const isUsernameAvailableAnswerSchema = z.object({ available: z.boolean() });

const signInUsernameAnswerSchema = z.object({
  redirect: z.boolean(),
  token: z.string(),
  url: z.string().optional(),
  user: userSchema,
});

export const usernameEndpoints = {
  signInUsername: endpoint({
    operationId: 'signInUsername',
    method: 'POST',
    path: '/sign-in/username',
    summary: 'Signs in with a username and password; sets the session cookie',
    tag: 'Username',
    auth: 'public',
    body: signInUsernameBodySchema,
    answer: signInUsernameAnswerSchema,
  }),
  isUsernameAvailable: endpoint({
    operationId: 'isUsernameAvailable',
    method: 'POST',
    path: '/is-username-available',
    summary: 'Whether a username is free to claim',
    tag: 'Username',
    auth: 'public',
    body: isUsernameAvailableBodySchema,
    answer: isUsernameAvailableAnswerSchema,
  }),
};
