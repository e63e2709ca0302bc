export * from './event-store.ts';
export { PostgresEventStore, EVENT_LOG_CHANNEL } from './postgres.ts';
export * from './hash-chain.ts';
