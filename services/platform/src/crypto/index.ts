export * from './tokens.ts';
export * from './password.ts';
export * from './cookie-signature.ts';
