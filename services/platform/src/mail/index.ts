export * from './transport.ts';
export { SmtpTransport } from './smtp.ts';
export { DevMailboxTransport, readDevMailbox, type MailboxMessage } from './dev-mailbox.ts';
