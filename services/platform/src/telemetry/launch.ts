import { startTracing } from './tracing.ts';

/**
 * A service's entry: tracing first (when asked), then the service's program, imported only once the loader
 * hook that instruments its dependencies is in place. The program is a module of its own beside the entry
 * (`api-process.js` beside `server.js` when built, `.ts` under tsx).
 */
export async function launch(serviceName: string, program: string, entryUrl: string): Promise<void> {
  await startTracing(serviceName);
  const extension = entryUrl.endsWith('.ts') ? '.ts' : '.js';
  await import(new URL(`./${program}${extension}`, entryUrl).href);
}
