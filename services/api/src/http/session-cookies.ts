import type { FastifyReply, FastifyRequest } from 'fastify';
import { openSignedCookie, signCookieValue, unsignCookieValue, type Config } from '@portcullis/platform';
import type { CookieAttributes } from './cookies.ts';
import { exposeHeader } from './cors.ts';

interface SessionCookieNames {
  readonly sessionToken: string;
  readonly sessionData: string;
  readonly dontRemember: string;
  /** better-auth's admin plugin: the admin's own session, kept aside while they impersonate someone. */
  readonly adminSession: string;
  /** A provider flow's state, signed: binds the flow to the browser that began it. */
  readonly state: string;
}

export interface SessionCookieSettings {
  /**
   * What every cookie the api sets or clears carries (Path, HttpOnly, SameSite, Secure, Domain): a cookie is
   * cleared only by one of the same name, domain and path, so setting and clearing share them.
   */
  readonly attributes: Readonly<CookieAttributes>;
  /** The key ring, newest first: cookies are signed with the newest and accepted under any. */
  readonly secrets: readonly string[];
  readonly expiresInSeconds: number;
  /**
   * Named once: every request looks its cookies up by these, and a name built per request is a new string
   * that V8 has to hash again for each lookup.
   */
  readonly names: SessionCookieNames;
}

/**
 * Cookie settings follow the configuration, as better-auth's `advanced` options: secure (and `__Secure-`
 * names) when the public URL is https unless AUTH_COOKIE_SECURE says otherwise, SameSite and a Domain.
 */
export function sessionCookieSettings(config: Config): SessionCookieSettings {
  const { secure, sameSite, domain } = config.cookie;
  return {
    attributes: Object.freeze({
      path: '/',
      httpOnly: true,
      sameSite,
      secure,
      ...(domain === null ? {} : { domain }),
      encode: encodeURIComponent,
    }),
    secrets: config.secrets,
    expiresInSeconds: config.session.expiresInSeconds,
    names: sessionCookieNames(config.cookiePrefix, secure),
  };
}

/** better-auth's cookie names: `<prefix>.<name>`, with `__Secure-` in front when the cookies are secure (browsers refuse such a name on a cookie that is not). */
function sessionCookieNames(prefix: string, secure: boolean): SessionCookieNames {
  const base = `${secure ? '__Secure-' : ''}${prefix}`;
  return {
    sessionToken: `${base}.session_token`,
    sessionData: `${base}.session_data`,
    dontRemember: `${base}.dont_remember`,
    adminSession: `${base}.admin_session`,
    state: `${base}.state`,
  };
}

export interface PresentedToken {
  readonly token: string;
  /** The session was created with rememberMe false: it is not refreshed, and its cookie has no max age. */
  readonly dontRemember: boolean;
  readonly via: 'cookie' | 'bearer';
  /**
   * A cookie read (the session's or dont_remember) was signed with an older secret of the ring: get-session
   * signs it again with the newest, so a session in use outlives the secret that signed it being dropped.
   */
  readonly signedByOlderSecret: boolean;
}

/**
 * The session token a request presents: the signed session cookie, or `Authorization: Bearer` with either
 * the signed value (as better-auth's bearer plugin hands out in `set-auth-token`) or the bare token.
 */
export function presentedToken(request: FastifyRequest, settings: SessionCookieSettings): PresentedToken | null {
  const { names } = settings;
  const dontRememberCookie = request.cookies[names.dontRemember];
  const dontRememberOpened = dontRememberCookie === undefined ? null : openSignedCookie(dontRememberCookie, settings.secrets);
  const dontRemember = dontRememberOpened?.value === 'true';
  const authorization = request.headers.authorization;
  if (typeof authorization === 'string' && authorization.slice(0, 7).toLowerCase() === 'bearer ') {
    let credential = authorization.slice(7).trim();
    if (credential.includes('%')) {
      try {
        credential = decodeURIComponent(credential);
      } catch {
        return null;
      }
    }
    const token = credential.includes('.') ? unsignCookieValue(credential, settings.secrets) : credential;
    if (token && token.length <= 256) return { token, dontRemember, via: 'bearer', signedByOlderSecret: false };
  }
  const cookie = request.cookies[names.sessionToken];
  if (!cookie) return null;
  const opened = openSignedCookie(cookie, settings.secrets);
  if (!opened) return null;
  const signedByOlderSecret = !opened.byNewest || dontRememberOpened?.byNewest === false;
  return { token: opened.value, dontRemember, via: 'cookie', signedByOlderSecret };
}

/**
 * Sets the session cookie (and `dont_remember` for rememberMe false, which makes it a browser-session
 * cookie), and hands the signed token to bearer clients in `set-auth-token`, as better-auth's bearer plugin.
 */
export function setSessionCookie(
  reply: FastifyReply,
  settings: SessionCookieSettings,
  token: string,
  options: { dontRemember: boolean },
): void {
  const { names } = settings;
  const signed = signCookieValue(token, settings.secrets);
  reply.setCookie(names.sessionToken, signed, {
    ...settings.attributes,
    ...(options.dontRemember ? {} : { maxAge: settings.expiresInSeconds }),
  });
  if (options.dontRemember) {
    reply.setCookie(names.dontRemember, signCookieValue('true', settings.secrets), settings.attributes);
  }
  reply.header('set-auth-token', signed);
  exposeHeader(reply, 'set-auth-token');
}

/** Expires every session cookie (max age 0), as better-auth does on sign-out and for dead sessions. */
export function clearSessionCookies(reply: FastifyReply, settings: SessionCookieSettings): void {
  const { names } = settings;
  for (const name of [names.sessionToken, names.sessionData, names.dontRemember]) {
    reply.setCookie(name, '', { ...settings.attributes, maxAge: 0 });
  }
}

/**
 * The cookies of a session just opened (sign-in, sign-up, a password change): the session's own, and a
 * dont_remember cookie left from an earlier sign-in dropped when this one wants to be remembered.
 */
export function setOpenedSessionCookies(request: FastifyRequest, reply: FastifyReply, settings: SessionCookieSettings, token: string, rememberMe: boolean): void {
  if (rememberMe) clearDontRemember(request, reply, settings);
  setSessionCookie(reply, settings, token, { dontRemember: !rememberMe });
}

/** A later sign-in that wants to be remembered drops a dont_remember cookie left from an earlier one. */
export function clearDontRemember(request: FastifyRequest, reply: FastifyReply, settings: SessionCookieSettings): void {
  const { names } = settings;
  if (request.cookies[names.dontRemember] !== undefined) {
    reply.setCookie(names.dontRemember, '', { ...settings.attributes, maxAge: 0 });
  }
}

/**
 * Keeps the admin's own session aside while they impersonate someone: `<token>:<dont_remember value>`
 * signed, as better-auth's admin plugin writes it, so stop-impersonating can restore it as it was.
 */
export function setAdminSessionCookie(
  request: FastifyRequest,
  reply: FastifyReply,
  settings: SessionCookieSettings,
  adminToken: string,
): void {
  const dontRemember = request.cookies[settings.names.dontRemember];
  const dontRememberValue = dontRemember === undefined ? null : unsignCookieValue(dontRemember, settings.secrets);
  const value = `${adminToken}:${dontRememberValue ?? ''}`;
  reply.setCookie(settings.names.adminSession, signCookieValue(value, settings.secrets), { ...settings.attributes, maxAge: settings.expiresInSeconds });
}

/** The admin session kept aside, if the request carries a validly signed one. */
export function adminSessionCookie(request: FastifyRequest, settings: SessionCookieSettings): { token: string; dontRemember: boolean } | null {
  const cookie = request.cookies[settings.names.adminSession];
  const value = cookie === undefined ? null : unsignCookieValue(cookie, settings.secrets);
  if (!value) return null;
  const separator = value.indexOf(':');
  const token = separator === -1 ? value : value.slice(0, separator);
  if (token === '' || token.length > 256) return null;
  return { token, dontRemember: separator !== -1 && value.slice(separator + 1) !== '' };
}

export function clearAdminSessionCookie(reply: FastifyReply, settings: SessionCookieSettings): void {
  reply.setCookie(settings.names.adminSession, '', { ...settings.attributes, maxAge: 0 });
}

/** better-auth lets the state cookie live 5 minutes; the flow itself lasts 10. */
const STATE_COOKIE_SECONDS = 5 * 60;

/** The browser's side of a provider flow: the state, signed, as better-auth's database strategy sets it. */
export function setStateCookie(reply: FastifyReply, settings: SessionCookieSettings, state: string): void {
  reply.setCookie(settings.names.state, signCookieValue(state, settings.secrets), { ...settings.attributes, maxAge: STATE_COOKIE_SECONDS });
}

/**
 * The state the browser carries: null when it has no state cookie, or one whose signature fails; and the
 * secret that signed it, which the flow's own secrets were derived from when it began (see `flowSecrets`).
 */
export function stateCookie(
  request: FastifyRequest,
  settings: SessionCookieSettings,
): { readonly present: boolean; readonly state: string | null; readonly secret: string | null } {
  const cookie = request.cookies[settings.names.state];
  const opened = cookie === undefined ? null : openSignedCookie(cookie, settings.secrets);
  return { present: cookie !== undefined, state: opened?.value ?? null, secret: opened?.secret ?? null };
}

export function clearStateCookie(reply: FastifyReply, settings: SessionCookieSettings): void {
  reply.setCookie(settings.names.state, '', { ...settings.attributes, maxAge: 0 });
}
