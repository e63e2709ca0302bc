import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { opsEndpoints } from '@portcullis/contracts';
import { installationRoot } from '@portcullis/platform/installation';
import type { OpsPorts } from './ports.ts';
import { consoleIsBuilt } from './console.routes.ts';
import { route } from '../http/declared-route.ts';

/**
 * The repository's README, at the installation's root (installationRoot, where the migrations are found).
 * The image ships without it, so there is no /readme there.
 */
const readmeFile = path.join(installationRoot(import.meta.url), 'README.md');

/** The page is all inline: no script, no external asset, nothing to frame it. */
const PAGE_POLICY = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

interface StartPageLinks {
  basePath: string;
  console: boolean;
  /** The dev mailbox holds mail only when there is no SMTP_URL, so only then is it offered. */
  mailbox: boolean;
  readme: boolean;
}

/** GET /: what someone who just ran `npm start` and opened the URL can do next */
function renderStartPage(links: StartPageLinks): string {
  const ok = `${escapeHtml(links.basePath)}/ok`;
  const items = [
    ...(links.console ? [`<li><a href="/console/">The ops console</a>: users, sessions, organizations, the audit trail, live figures (an admin signs in)</li>`] : []),
    `<li><a href="${ok}">${ok}</a>: the auth API (better-auth's HTTP API) answers here</li>`,
    `<li><a href="/readyz">/readyz</a>: whether Postgres, Redis and the projections are ready</li>`,
    ...(links.mailbox ? [`<li><a href="/ops/mailbox">/ops/mailbox</a>: the dev mailbox, where mail lands without SMTP_URL</li>`] : []),
    ...(links.readme ? [`<li><a href="/readme">README</a>: what runs, the API, the configuration</li>`] : []),
  ];
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Portcullis</title>
<style>
  body { font-family: system-ui, sans-serif; display: grid; place-items: center; min-height: 100vh; margin: 0; background: #f6f6f4; color: #1d1d1b; }
  main { max-width: 36rem; padding: 2rem; }
  li { margin: 0.4rem 0; }
</style>
</head>
<body>
<main>
  <h1>Portcullis</h1>
  <p>An account and organization access service: a standalone authentication server, wire-compatible with better-auth.</p>
  <ul>
    ${items.join('\n    ')}
  </ul>
</main>
</body>
</html>
`;
}

/**
 * GET / (the console where it is built, else this page), GET /start and GET /readme. Both answer text fixed at start, as cheaply as the probes, so like them they stand
 * outside the perimeter (which guards the auth API under the base path).
 */
export function startPageRoutes(ctx: OpsPorts) {
  return async function register(app: FastifyInstance): Promise<void> {
    const readme = await readFile(readmeFile, 'utf8').catch(() => null);
    const withConsole = await consoleIsBuilt();
    const page = renderStartPage({ basePath: ctx.config.basePath, console: withConsole, mailbox: ctx.config.mail.smtpUrl === null, readme: readme !== null });
    const sendPage = (reply: FastifyReply) => reply.type('text/html; charset=utf-8').header('content-security-policy', PAGE_POLICY).send(page);

    route(app, opsEndpoints.startPage, async (_request, reply) => sendPage(reply));
    route(app, opsEndpoints.root, async (_request, reply) => (withConsole ? reply.redirect('/console/', 302) : sendPage(reply)));
    if (readme !== null) {
      route(app, opsEndpoints.readme, async (_request, reply) =>
        reply.type('text/plain; charset=utf-8').header('x-content-type-options', 'nosniff').send(readme),
      );
    }
  };
}
