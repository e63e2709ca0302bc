import { readFile } from 'node:fs/promises';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { opsEndpoints } from '@portcullis/contracts';
import { installationRoot } from '@portcullis/platform/installation';
import type { ConfigPort } from '../ports.ts';
import { route } from '../http/declared-route.ts';

/**
 * The console's build (`console/dist`, made by `npm start`, CI and the image's build), found where the
 * migrations are (installationRoot), so the built api finds it in a checkout and in the image. Without a build, `/` stays the start page.
 */
const consoleDist = path.join(installationRoot(import.meta.url), 'console', 'dist');

/** Assets are content-hashed file names: only such a name is served, so no path leaves the assets folder. */
const ASSET = /^[A-Za-z0-9_.-]+\.(js|css|map|svg|png|woff2)$/;
/** A file name outside the assets is a miss (a favicon, a stale script), not a console page. */
const FILE_NAME = /\.[A-Za-z0-9]{1,5}$/;

/**
 * The console's own scripts and styles only (recharts sets inline styles on its SVG); it talks to this
 * origin alone and is never framed.
 */
const CONSOLE_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** The api's auth base path goes into the page, so the console calls the API where this deployment serves it. */
function pageWithBasePath(page: string, basePath: string): string {
  const escaped = basePath.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return page.replace(/<meta name="portcullis-auth-base" content="[^"]*"/, `<meta name="portcullis-auth-base" content="${escaped}"`);
}

/** GET /console/* (the page for every console path, and its assets), where the console is built. */
export function consoleRoutes(ctx: ConfigPort) {
  return async function register(app: FastifyInstance): Promise<void> {
    const built = await readFile(path.join(consoleDist, 'index.html'), 'utf8').catch(() => null);
    if (built === null) return;
    const page = pageWithBasePath(built, ctx.config.basePath);
    // Only reply.sendFile: the routes below decide what is served.
    // Content-hashed names never change content: a year, immutable.
    await app.register(fastifyStatic, { root: path.join(consoleDist, 'assets'), serve: false, maxAge: '365d', immutable: true });

    route(app, opsEndpoints.consoleHome, async (_request, reply) => reply.redirect('/console/', 301));
    route(app, opsEndpoints.console, async (request, reply) => {
      const inside = (request.params as { '*'?: string })['*'] ?? '';
      if (inside.startsWith('assets/')) {
        const name = inside.slice('assets/'.length);
        if (!ASSET.test(name)) return reply.code(404).type('text/plain').send('Not found');
        return reply.sendFile(name);
      }
      if (FILE_NAME.test(inside)) return reply.code(404).type('text/plain').send('Not found');
      return reply
        .type('text/html; charset=utf-8')
        .header('cache-control', 'no-cache')
        .header('content-security-policy', CONSOLE_POLICY)
        .header('x-content-type-options', 'nosniff')
        .send(page);
    });
  };
}

/** Whether the console is built here (the start page links it, and `/` leads to it, only then). */
export async function consoleIsBuilt(): Promise<boolean> {
  return (await readFile(path.join(consoleDist, 'index.html'), 'utf8').catch(() => null)) !== null;
}
