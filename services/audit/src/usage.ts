/** A command line a CLI cannot act on: its message is shown with the usage. */
export class UsageError extends Error {}

/**
 * Answers a command line the CLI could not read (a `UsageError`, or one `parseArgs` refused) with its message
 * and the usage on standard error and exit code 64 (EX_USAGE); anything else is rethrown.
 */
export function reportUsageError(error: unknown, usage: string): void {
  const code = (error as { code?: unknown }).code;
  if (!(error instanceof UsageError) && !(typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS'))) throw error;
  console.error(`${(error as Error).message}\n\n${usage}`);
  process.exitCode = 64;
}
