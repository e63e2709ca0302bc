export * from './event-store.ts';
export { PostgresEventStore } from './postgres.ts';
export * from './hash-chain.ts';
export { KurrentEventStore, type KurrentEventStoreOptions } from './kurrentdb.ts';
export * from './engine.ts';
export { streamsWithEventsOf } from './streams-of-types.ts';
export * from './log-chain.ts';
export { Chainer, CHAINER_LOCK_KEY, type ChainerOptions } from './chainer.ts';
