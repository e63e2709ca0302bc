import { z } from 'zod';

/** The user as better-auth answers it; dates travel as ISO strings. */
export const userSchema = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string(),
  image: z.string().nullable(),
  emailVerified: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type User = z.infer<typeof userSchema>;

export const updateUserBodySchema = z
  .object({
    name: z.string().max(256).optional(),
    image: z.string().max(2048).nullable().optional(),
    email: z.unknown().optional().meta({ description: 'Refused: use /change-email' }),
  })
  .meta({ description: 'POST /update-user' });

export const statusAnswerSchema = z.object({ status: z.boolean() });
