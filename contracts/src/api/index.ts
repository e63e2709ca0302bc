export * from './user.ts';
export * from './session.ts';
export * from './credentials.ts';
export * from './account-lifecycle.ts';
export * from './username.ts';
