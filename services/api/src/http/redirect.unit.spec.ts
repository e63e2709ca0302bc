import { validateHeaderValue } from 'node:http';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DomainError } from '@portcullis/contracts';
import { isTrustedRedirect } from './trusted-origins.ts';
import { redirectLocation } from './redirect.ts';

const BASE_URL = 'http://localhost:3000';
/** What the config makes of BASE_URL and TRUSTED_ORIGINS=https://app.example.com,https://*.example.org,myapp:// */
const TRUSTED = [BASE_URL, 'https://app.example.com', 'https://*.example.org', 'myapp://'];
/** The page a redirect is answered from: a relative Location resolves against it. */
const ANSWERING_PAGE = `${BASE_URL}/api/auth/verify-email?token=x`;

/** The test's own idea of a trusted destination, written without the code under test. */
function landsOnTrustedOrigin(location: string): boolean {
  const resolved = new URL(location, ANSWERING_PAGE);
  if (resolved.protocol === 'myapp:') return true;
  if (resolved.origin === BASE_URL || resolved.origin === 'https://app.example.com') return true;
  return resolved.protocol === 'https:' && resolved.hostname.endsWith('.example.org') && resolved.port === '';
}

/** The pieces path tricks are made of: dot segments plain and encoded, separators, whitespace, look-alikes. */
const piece = fc.constantFrom(
  '/', '//', '///', '..', '.', '%2e', '%2E', '%2e%2e', '.%2e', '%2f', '%2F', '%5c', '\\', '\t', '\n', '\r', ' ', '@', ':', '?', '#', '&', '=',
  'evil.test', 'localhost', 'localhost:3000', 'app.example.com', 'x.example.org', 'example.org.evil.test', 'http:', 'https:', '//evil.test',
  'javascript:alert(1)', '\u3002', '\u2028', '\uff0f', '\uff3c', '\u00e9', '\u{1F600}', '%', '%00', '%zz', ';', '..;', 'a', 'dashboard',
);
const start = fc.constantFrom('/', '/', '/', '', 'http://localhost:3000', 'http://localhost:3000/', 'https://app.example.com/', 'https://x.example.org', 'myapp://', 'HTTP://LOCALHOST:3000/');
const trick = fc.tuple(start, fc.array(piece, { maxLength: 10 })).map(([head, pieces]) => head + pieces.join(''));

/** Every way the api builds a Location from a callback URL it was given. */
const builders: ReadonlyArray<readonly [string, (given: string) => string]> = [
  ['as given (verify-email, delete-user/callback, sign-in)', (given) => redirectLocation(given, TRUSTED)],
  ['with an error appended (verify-email failures)', (given) => redirectLocation(given, TRUSTED, { params: { error: 'invalid_token' } })],
  [
    'resolved against the auth base URL (reset-password/:token)',
    (given) => {
      const target = new URL(given, `${BASE_URL}/api/auth`);
      target.searchParams.set('token', 'abc');
      return redirectLocation(target.href, TRUSTED);
    },
  ],
];

const REFUSED = Symbol('refused');

function build(builder: (given: string) => string, given: string): string | typeof REFUSED {
  try {
    return builder(given);
  } catch (error) {
    if (error instanceof DomainError && error.code === 'INVALID_CALLBACK_URL') return REFUSED;
    if (error instanceof TypeError) return REFUSED; // `new URL` refusing the given value, before any builder ran.
    throw error;
  }
}

describe('redirect builders', () => {
  it('send a Location that stays on a trusted origin, fits a header, or refuse: whatever path tricks they are fed', () => {
    fc.assert(
      fc.property(trick, (given) => {
        for (const [name, builder] of builders) {
          const sent = build(builder, given);
          if (sent === REFUSED) continue;
          const what = `${name}: ${JSON.stringify(given)} → ${JSON.stringify(sent)}`;
          expect(sent, what).toMatch(/^[\x21-\x7e]*$/);
          expect(() => validateHeaderValue('location', sent), what).not.toThrow();
          expect(landsOnTrustedOrigin(sent), what).toBe(true);
        }
      }),
      { numRuns: 5000 },
    );
  });

  it('refuse nothing the redirect check let through', () => {
    fc.assert(
      fc.property(trick, (given) => {
        if (!isTrustedRedirect(given, TRUSTED)) return;
        for (const [name, builder] of builders) expect(build(builder, given), `${name}: ${JSON.stringify(given)}`).not.toBe(REFUSED);
      }),
      { numRuns: 5000 },
    );
  });

  it('keep a relative path as given, and encode what a header cannot carry', () => {
    expect(redirectLocation('/after?tab=1#top', TRUSTED, { params: { error: 'invalid_token' } })).toBe('/after?tab=1&error=invalid_token#top');
    expect(redirectLocation('/\u3002', TRUSTED)).toBe('/%E3%80%82');
    expect(redirectLocation('/a\u2028b', TRUSTED)).toBe('/a%E2%80%A8b');
    expect(redirectLocation('/caf\u00e9', TRUSTED)).toBe('/caf%C3%A9');
  });

  it('refuse the open redirects the issue found: dot segments that normalize to another host', () => {
    for (const given of ['/..//evil.test', '/%2e%2e//evil.test', '/x/../..//evil.test', '/.%2e//evil.test']) {
      expect(isTrustedRedirect(given, TRUSTED), given).toBe(false);
      for (const [name, builder] of builders.slice(0, 2)) expect(build(builder, given), `${name}: ${given}`).toBe(REFUSED);
    }
  });
});
