export * from './config.ts';
export * from './logger.ts';
export * from './database/pool.ts';
export { migrate } from './database/migrate.ts';
export * from './event-store/index.ts';
export * from './crypto/index.ts';
export * from './projection/index.ts';
export * from './cache/redis.ts';
