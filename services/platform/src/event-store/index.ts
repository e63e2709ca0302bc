export * from './event-store.ts';
export { PostgresEventStore } from './postgres.ts';
export * from './hash-chain.ts';
