import type { StreamWrite } from '@portcullis/platform';
import type { ApiContext } from './context.ts';

/**
 * Appends atomically, then waits until the projections the api reads from, those the appended events
 * concern, have applied the append, so the caller's next request sees its own write. `unchanged` are
 * streams the append only requires at a version (see `unchangedStream`); with nothing to write, nothing
 * is checked either.
 */
export async function commit(ctx: ApiContext, writes: readonly StreamWrite[], unchanged: readonly StreamWrite[] = []): Promise<number | null> {
  const nonEmpty = writes.filter((w) => w.events.length > 0);
  if (nonEmpty.length === 0) return null;
  const { position } = await ctx.store.append(unchanged.length > 0 ? [...nonEmpty, ...unchanged] : nonEmpty);
  const types = new Set(nonEmpty.flatMap((w) => w.events.map((e) => e.type)));
  await ctx.progress.settle(position, types, 'write');
  return position;
}

export { withRetryOnConflict } from './retry-on-conflict.ts';
