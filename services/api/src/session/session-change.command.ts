import { streams } from '@portcullis/contracts';
import type { RequestMetadata, Settlement } from '@portcullis/platform';
import type { SessionPorts } from './ports.ts';
import { decideOnSession } from './session-lifecycle.ts';
import type { SessionCommand } from './session.decider.ts';

/**
 * A session's own command (refresh, revoke, expire: `decideSession`) on its stream, and on the user's
 * session index for an ending or a refresh: sign-out, an expiry found on a read, a refresh due, the end of an
 * impersonation.
 */
export async function runSessionCommand(
  ctx: Pick<SessionPorts, 'commands'>,
  request: RequestMetadata,
  sessionId: string,
  command: SessionCommand,
  options: { actorId: string | null; settle?: Settlement },
): Promise<Awaited<ReturnType<typeof decideOnSession>>> {
  const { result } = await ctx.commands.handle(
    { name: `session.${command.type}`, request, actorId: options.actorId, serialize: [streams.session(sessionId)], settle: options.settle ?? 'write' },
    (unit) => decideOnSession(unit, sessionId, command),
  );
  return result;
}
