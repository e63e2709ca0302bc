export * from './tokens.ts';
export * from './secret-ring.ts';
export * from './password.ts';
export * from './cookie-signature.ts';
export * from './sealed-token.ts';
export * from './jose.ts';
export * from './ed25519.ts';
export * from './personal-data-cipher.ts';
