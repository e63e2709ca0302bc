export * from './errors/index.ts';
export * from './events/index.ts';
export * from './api/index.ts';
export * from './mail/index.ts';
export * from './projections.ts';
export * from './session-cache.ts';
export * from './organization-access.ts';
export * from './user-answer.ts';
