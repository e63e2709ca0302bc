export * from './user.ts';
export * from './session.ts';
export * from './credentials.ts';
