export * from './rate-limit-store.ts';
export * from './redis.ts';
export * from './postgres.ts';
export * from './batched.ts';
