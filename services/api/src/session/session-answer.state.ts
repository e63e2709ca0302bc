import { evolveSessionAnswer, evolveUserAnswer, type CachedSession, type DomainEvent, type EventTime, type StreamModel, type User } from '@portcullis/contracts';

/** A session's stream as get-session answers it, with the token hash it was created for. */
export interface SessionAnswerState {
  readonly tokenHash: string | null;
  readonly session: CachedSession['session'] | null;
}

export const initialSessionAnswer = (): SessionAnswerState => ({ tokenHash: null, session: null });

export function evolveSessionAnswerState(state: SessionAnswerState, event: DomainEvent, time: EventTime): SessionAnswerState {
  return {
    tokenHash: event.type === 'session.created.v2' || event.type === 'session.impersonation_started.v1' ? event.data.tokenHash : state.tokenHash,
    session: evolveSessionAnswer(state.session, event, time.occurredAt),
  };
}

export const sessionAnswerModel: StreamModel<SessionAnswerState> = {
  name: 'session-answer',
  revision: 1,
  initial: initialSessionAnswer,
  evolve: evolveSessionAnswerState,
};

/** A user's stream as every answer shows the user. */
export const userAnswerModel: StreamModel<User | null> = {
  name: 'user-answer',
  revision: 1,
  initial: () => null,
  evolve: (user, event, time) => evolveUserAnswer(user, event, time.occurredAt),
};
