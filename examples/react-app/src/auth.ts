import { createAuthClient } from 'better-auth/react';
import { adminClient, organizationClient, usernameClient } from 'better-auth/client/plugins';

/**
 * Where Portcullis runs: `?api=` on the first visit (the tests give the port they started it on), kept for
 * the tab's later pages (the verification link comes back without it); else VITE_PORTCULLIS_URL at build
 * time; else `npm start`'s default.
 */
function portcullisUrl(): string {
  const given = new URLSearchParams(window.location.search).get('api') ?? sessionStorage.getItem('portcullis-url');
  const url = given ?? (import.meta.env.VITE_PORTCULLIS_URL as string | undefined) ?? 'http://localhost:3000';
  sessionStorage.setItem('portcullis-url', url);
  return url;
}

/**
 * better-auth's own React client, unchanged: it sends `credentials: 'include'`, so the browser keeps the
 * api's session cookie and sends it back on every call (the api answers this origin with CORS headers once
 * it is in TRUSTED_ORIGINS).
 */
export const authClient = createAuthClient({
  baseURL: portcullisUrl(),
  plugins: [organizationClient(), usernameClient(), adminClient()],
});
