import { expect } from 'vitest';
import { DomainError, type DomainEvent, type ErrorCode } from '@portcullis/contracts';

/**
 * given events → when command → then events, or then the error code: a decider test without I/O. `Event` is
 * what the decider folds: a domain event, or a timed one for deciders whose rules count time.
 */
export function deciderSpec<State, Command, Result, Event = DomainEvent>(decider: {
  evolve: (state: State, event: Event) => State;
  initial: () => State;
  decide: (command: Command, state: State) => Result;
}) {
  return (given: readonly Event[]) => ({
    when: (command: Command) => {
      const run = (): Result => decider.decide(command, given.reduce(decider.evolve, decider.initial()));
      return {
        then: (expected: Result): void => expect(run()).toEqual(expected),
        thenFails: (code: ErrorCode): void => {
          let thrown: unknown;
          try {
            run();
          } catch (error) {
            thrown = error;
          }
          expect(thrown).toBeInstanceOf(DomainError);
          expect((thrown as DomainError).code).toBe(code);
        },
      };
    },
  });
}

/** given events → then the state they fold to: the spec of a fold a decider decides on. */
export function foldSpec<State, Event = DomainEvent>(fold: { evolve: (state: State, event: Event) => State; initial: () => State }) {
  return (given: readonly Event[]) => ({
    then: (expected: State): void => expect(given.reduce(fold.evolve, fold.initial())).toEqual(expected),
  });
}
