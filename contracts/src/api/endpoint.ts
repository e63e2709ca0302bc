import { z } from 'zod';

/**
 * What an endpoint is, declared once: the server registers its handler under it (fastify validates the
 * request with these schemas and documents them in the OpenAPI document), tests hold real answers to its
 * answer schema, and clients take paths and types from it.
 */
export interface Endpoint {
  /** better-auth client's name for it, where there is one (`signUpEmail`, `organization.create` as `createOrganization`). */
  readonly operationId: string;
  readonly method: 'GET' | 'POST' | readonly ['GET', 'POST'];
  /** Under the auth base path (`/api/auth`), unless `root`. */
  readonly path: `/${string}`;
  readonly root?: true;
  /**
   * The path this one is another name of (a path better-auth renamed, served under both): the two are one
   * operation, and count as one route wherever routes are counted (the rate limit's buckets).
   */
  readonly sameOperationAs?: `/${string}`;
  readonly summary: string;
  readonly tag: string;
  /**
   * Who may call it: `session` needs a signed-in caller (401 otherwise), `optional` answers either way,
   * `server` needs the server key (x-api-key), `session-or-server` either of those (a server call naming
   * the user it acts for), `public` nobody in particular.
   */
  readonly auth: 'session' | 'optional' | 'server' | 'session-or-server' | 'public';
  readonly body?: z.ZodType;
  readonly query?: z.ZodType;
  readonly params?: z.ZodType;
  /** The 200 answer's JSON, when the endpoint answers JSON. */
  readonly answer?: z.ZodType;
  /** Answers of other statuses that are not the catalogue's error (readiness' 503, say). */
  readonly otherAnswers?: Readonly<Record<number, z.ZodType>>;
  /** Answers with a 302 to a callback URL (the link endpoints a browser follows) instead of, or as well as, JSON. */
  readonly redirects?: true;
  /** Answers HTML for browsers. */
  readonly html?: true;
}

/** Every refusal, as better-auth answers it: the catalogue's code and message. */
export const errorAnswerSchema = z
  .object({
    code: z.string().meta({ description: 'The catalogue code, e.g. INVALID_EMAIL_OR_PASSWORD' }),
    message: z.string(),
    details: z.string().optional().meta({ description: 'Which fields failed validation, `[body.email] ...`' }),
  })
  .meta({ id: 'ErrorAnswer' });


export function endpoint<const E extends Endpoint>(declared: E): E {
  return declared;
}
