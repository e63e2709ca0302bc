export * from './transport.ts';
export { SmtpTransport } from './smtp.ts';
export { DevMailboxTransport, readDevMailbox } from './dev-mailbox.ts';
