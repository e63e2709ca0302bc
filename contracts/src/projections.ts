/**
 * Projection names shared by the projector (which runs them) and the api (which waits for them to reach an
 * appended position before it answers, so a client reads its own writes).
 */
export const projectionNames = {
  identity: 'identity',
  sessions: 'sessions',
  sessionCache: 'session-cache',
  organizations: 'organizations',
} as const;
export type ProjectionName = (typeof projectionNames)[keyof typeof projectionNames];
