import { HttpClient } from './system.ts';

/**
 * Fetch options that give a better-auth client a cookie jar of its own. Node's fetch keeps no cookies, so the
 * jar rides the client's onRequest/onResponse hooks; the Origin header is what a browser would send, and
 * what better-auth deployments require on cookie-carrying POSTs. Spread into `createAuthClient`, so each
 * test keeps the client's plugin types.
 */
export function cookieJarFetch(system: { readonly baseUrl: string; readonly authUrl: string }) {
  const jar = new HttpClient(system.authUrl);
  const fetchOptions = {
    headers: { origin: system.baseUrl },
    onRequest(context: { headers: Headers }) {
      const cookie = jar.cookieHeader();
      if (cookie) context.headers.set('cookie', cookie);
    },
    onResponse(context: { response: Response }) {
      jar.absorb(context.response.headers.getSetCookie());
    },
  };
  return { jar, fetchOptions };
}
