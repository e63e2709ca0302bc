import { z } from 'zod';
import { displayUsernameInputSchema, imageUrlSchema } from './user-fields.ts';
import { endpoint } from './endpoint.ts';

/** The user as better-auth answers it; dates travel as ISO strings. */
export const userSchema = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string(),
  image: z.string().nullable(),
  emailVerified: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
  // The username plugin's fields, present once set (better-auth's memory adapter leaves them out likewise).
  username: z.string().optional().meta({ description: 'Lower-cased, unique' }),
  displayUsername: z.string().optional(),
  // The admin plugin's fields: every user has a role (`user` unless set; several comma-separated) and a ban state.
  role: z.string(),
  banned: z.boolean(),
  banReason: z.string().nullable(),
  banExpires: z.string().nullable().meta({ description: 'When the ban lifts itself; null: until unbanned' }),
});
export type User = z.infer<typeof userSchema>;

const updateUserBodySchema = z
  .object({
    name: z.string().max(256).optional(),
    image: imageUrlSchema.nullable().optional(),
    email: z.unknown().optional().meta({ description: 'Refused: use /change-email' }),
    username: z.string().max(1024).optional(),
    displayUsername: displayUsernameInputSchema.optional(),
  })
  .meta({ description: 'POST /update-user' });

export const statusAnswerSchema = z.object({ status: z.boolean() });

export const userEndpoints = {
  updateUser: endpoint({
    operationId: 'updateUser',
    method: 'POST',
    path: '/update-user',
    summary: 'Changes the caller\'s name, image or username (the email changes through /change-email)',
    tag: 'User',
    auth: 'session',
    body: updateUserBodySchema,
    answer: statusAnswerSchema,
  }),
};
