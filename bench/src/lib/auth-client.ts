/** The few better-auth-compatible calls the bench needs before it measures, with answers checked. */
export class AuthClient {
  private readonly origin: string;

  /** `baseUrl` is the auth base (…/api/auth); its origin is what the api trusts. */
  constructor(private readonly baseUrl: string) {
    this.origin = new URL(baseUrl).origin;
  }

  async signUp(user: { name: string; email: string; password: string }): Promise<void> {
    const response = await this.post('/sign-up/email', user);
    await expectOk(response, 'sign-up');
  }

  /** Signs in and returns the signed token from `set-auth-token`, which both cookie and bearer carry. */
  async signIn(credentials: { email: string; password: string }): Promise<{ token: string; signedToken: string }> {
    const response = await this.post('/sign-in/email', credentials);
    const body = (await expectOk(response, 'sign-in')) as { token?: unknown };
    const signedToken = response.headers.get('set-auth-token');
    if (typeof body.token !== 'string' || !signedToken) throw new Error('sign-in answered without a token');
    return { token: body.token, signedToken };
  }

  /** Fails unless get-session answers the session of `email` for these headers. */
  async expectSession(headers: Record<string, string>, email: string): Promise<void> {
    const response = await fetch(`${this.baseUrl}/get-session`, { headers, signal: AbortSignal.timeout(10_000) });
    const body = (await expectOk(response, 'get-session')) as { user?: { email?: unknown } } | null;
    if (body?.user?.email !== email) throw new Error(`get-session did not answer the session: ${JSON.stringify(body)}`);
  }

  private post(path: string, body: unknown): Promise<Response> {
    return fetch(`${this.baseUrl}${path}`, {
      method: 'POST',
      // fetch sends Fetch Metadata (sec-fetch-mode), which makes the api's login-CSRF check want an Origin.
      headers: { 'content-type': 'application/json', origin: this.origin },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
  }
}

async function expectOk(response: Response, what: string): Promise<unknown> {
  const text = await response.text();
  if (!response.ok) throw new Error(`${what} answered ${response.status}: ${text}`);
  return text ? JSON.parse(text) : null;
}

export function cookieHeader(signedToken: string): Record<string, string> {
  return { cookie: `better-auth.session_token=${encodeURIComponent(signedToken)}` };
}

export function bearerHeader(signedToken: string): Record<string, string> {
  return { authorization: `Bearer ${signedToken}` };
}
