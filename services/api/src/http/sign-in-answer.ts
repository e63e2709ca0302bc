import type { FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '@portcullis/contracts';
import { setOpenedSessionCookies, type SessionCookieSettings } from './session-cookies.ts';

/** A session a sign-in opened, to be answered once its command has landed. */
export interface OpenedSignIn {
  readonly token: string;
  readonly user: User;
  readonly rememberMe: boolean;
  readonly callbackURL: string | undefined;
  /** Where a callbackURL sends the browser, decided before the session was appended. */
  readonly location: string | null;
}

/** better-auth's sign-in answer `{redirect, token, url?, user}`, with the session's cookie and bearer header. */
export function answerSignIn(
  cookies: SessionCookieSettings,
  request: FastifyRequest,
  reply: FastifyReply,
  opened: OpenedSignIn,
): { redirect: boolean; token: string; url?: string; user: User } {
  setOpenedSessionCookies(request, reply, cookies, opened.token, opened.rememberMe);
  if (opened.location) reply.header('location', opened.location);
  return {
    redirect: Boolean(opened.callbackURL),
    token: opened.token,
    ...(opened.callbackURL ? { url: opened.callbackURL } : {}),
    user: opened.user,
  };
}
