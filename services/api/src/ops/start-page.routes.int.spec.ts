import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startInProcessApi, type InProcessApi } from '../../../../tests/support/in-process-api.ts';
import { repoRoot } from '../../../../tests/support/processes.ts';

const SECRET = 'start-page-secret-start-page-secret-0123';
const started: InProcessApi[] = [];

afterAll(async () => {
  for (const api of started) await api.close();
});

async function api(env: Record<string, string>): Promise<InProcessApi> {
  const running = await startInProcessApi('start_page', { AUTH_SECRET: SECRET, ...env });
  started.push(running);
  return running;
}

/** The targets of the page's links, in order. */
function links(html: string): string[] {
  return [...html.matchAll(/<a href="([^"]+)">/g)].map((match) => match[1]!);
}

describe('GET / and GET /start', () => {
  it('leads to the ops console, which the test run built', async () => {
    const { app } = await api({});
    const response = await app.inject({ url: '/' });
    expect(response.statusCode).toBe(302);
    expect(response.headers.location).toBe('/console/');
  });

  it('answers a short HTML page linking the console, the auth API, readiness, the dev mailbox and the README', async () => {
    const { app } = await api({ AUTH_BASE_PATH: '/auth' });
    const response = await app.inject({ url: '/start' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.headers['content-security-policy']).toContain("default-src 'none'");
    expect(response.body).toContain('<title>Portcullis</title>');
    expect(links(response.body)).toEqual(['/console/', '/auth/ok', '/readyz', '/ops/mailbox', '/readme']);
    // Every link leads somewhere (readiness may still be 503 while the projections start).
    for (const link of links(response.body)) expect((await app.inject({ url: link })).statusCode, link).not.toBe(404);
    expect((await app.inject({ url: '/auth/ok' })).json()).toEqual({ ok: true });
  });

  it('leaves the dev mailbox out when mail goes out over SMTP, which leaves nothing in it', async () => {
    const { app } = await api({ SMTP_URL: 'smtp://mail.example.test:25' });
    const response = await app.inject({ url: '/start' });
    expect(response.statusCode).toBe(200);
    expect(links(response.body)).toEqual(['/console/', '/api/auth/ok', '/readyz', '/readme']);
  });

  it('serves the repository README as plain text at /readme', async () => {
    const { app } = await api({});
    const response = await app.inject({ url: '/readme' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(response.body).toBe(await readFile(path.join(repoRoot, 'README.md'), 'utf8'));
  });
});

describe('GET /console/*', () => {
  it('answers the console page for any console path, with the auth base path written in and a strict policy', async () => {
    const { app } = await api({ AUTH_BASE_PATH: '/auth' });
    for (const url of ['/console/', '/console/users/some-id', '/console/audit?user=a,b']) {
      const response = await app.inject({ url });
      expect(response.statusCode, url).toBe(200);
      expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(response.headers['content-security-policy']).toContain("script-src 'self'");
      expect(response.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(response.body).toContain('<meta name="portcullis-auth-base" content="/auth"');
    }
    expect((await app.inject({ url: '/console' })).headers.location).toBe('/console/');
  });

  it('serves the built assets for a year, and nothing outside them', async () => {
    const { app } = await api({});
    const page = (await app.inject({ url: '/console/' })).body;
    const script = /src="\/console\/(assets\/[^"]+\.js)"/.exec(page)?.[1];
    expect(script).toBeDefined();
    const asset = await app.inject({ url: `/console/${script}` });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(asset.headers['content-type']).toContain('javascript');
    for (const url of ['/console/assets/..%2F..%2Findex.html', '/console/assets/missing.js', '/console/assets/%2e%2e/vite.config.ts']) {
      expect((await app.inject({ url })).statusCode, url).toBe(404);
    }
  });
});
