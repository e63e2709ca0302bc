export * from './command-handler.ts';
export * from './keyed-queue.ts';
export * from './request-metadata.ts';
export * from './state-cache.ts';
export * from './stream-loader.ts';
export * from './unit-of-work.ts';
export * from './background-snapshots.ts';
