import type { ConfigPort } from '../ports.ts';

/** Queuing mail needs the secret its tokens are sealed with. */
export type MailPorts = ConfigPort;
