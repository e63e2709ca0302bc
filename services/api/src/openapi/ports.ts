import type { ConfigPort } from '../ports.ts';

/** The document names the base URL and the cookie. */
export type OpenApiPorts = ConfigPort;
