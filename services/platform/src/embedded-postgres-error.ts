/**
 * A start that cannot succeed, said in one sentence with what to do about it; `serverOutput` holds the last
 * lines Postgres itself printed, when it got as far as running.
 */
export class EmbeddedPostgresError extends Error {
  constructor(
    message: string,
    readonly serverOutput: readonly string[] = [],
  ) {
    super(message);
    this.name = 'EmbeddedPostgresError';
  }
}
