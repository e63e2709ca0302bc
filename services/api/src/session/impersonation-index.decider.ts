import { ImpersonationOpened, ImpersonationsClosed, type DomainEvent, type EventTime, type StreamModel } from '@portcullis/contracts';
import { withoutLongExpired } from './session-index.decider.ts';

/** An impersonation session the admin opened that may still be live: opened, and not closed here. */
export interface OpenedImpersonation {
  readonly userId: string;
  readonly sessionId: string;
  readonly tokenHash: string;
  readonly expiresAt: string;
}

/**
 * The impersonation sessions an admin opened, from `impersonations-<adminId>`. Those long expired are
 * dropped as the log's clock moves on (`withoutLongExpired`, as in the user's session index), so the state
 * stays as small as the set of live impersonations however long the stream grows.
 */
export interface ImpersonationIndexState {
  readonly open: readonly OpenedImpersonation[];
}

export const initialImpersonationIndex = (): ImpersonationIndexState => ({ open: [] });

export function evolveImpersonationIndex(state: ImpersonationIndexState, event: DomainEvent, time: EventTime): ImpersonationIndexState {
  let open: readonly OpenedImpersonation[];
  switch (event.type) {
    case 'impersonation_index.session_opened.v1': {
      const { userId, sessionId, tokenHash, expiresAt } = event.data;
      open = [...state.open.filter((s) => s.sessionId !== sessionId), { userId, sessionId, tokenHash, expiresAt }];
      break;
    }
    case 'impersonation_index.sessions_closed.v1': {
      const closed = new Set(event.data.sessionIds);
      open = state.open.filter((s) => !closed.has(s.sessionId));
      break;
    }
    default:
      return state;
  }
  return { open: withoutLongExpired(open, time) };
}

export const impersonationIndexModel: StreamModel<ImpersonationIndexState> = {
  name: 'impersonations',
  revision: 1,
  initial: initialImpersonationIndex,
  evolve: evolveImpersonationIndex,
};

export function impersonationOpened(adminId: string, session: OpenedImpersonation): DomainEvent {
  return ImpersonationOpened({ adminId, ...session });
}

/**
 * The impersonation sessions to end with their opener, and the index's record of it. Each is ended on its
 * own stream by the caller, which knows whether it is still live there; those past their expiry are only
 * closed here.
 */
export function decideCloseImpersonations(
  command: { readonly adminId: string; readonly now: Date },
  state: ImpersonationIndexState,
): { readonly index: DomainEvent[]; readonly live: readonly OpenedImpersonation[] } {
  if (state.open.length === 0) return { index: [], live: [] };
  const now = command.now.getTime();
  return {
    index: [ImpersonationsClosed({ adminId: command.adminId, sessionIds: state.open.map((s) => s.sessionId) })],
    live: state.open.filter((s) => Date.parse(s.expiresAt) > now),
  };
}
