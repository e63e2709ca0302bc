import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import Fastify from 'fastify';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { endpoint } from '@portcullis/contracts';
import { startInProcessApi, type InProcessApi } from '../../../../tests/support/in-process-api.ts';
import { listedRoutes } from '../../../../tests/support/routes.ts';
import { checkAnswersAgainstDeclarations } from '../http/answer-check.ts';
import { route } from '../http/declared-route.ts';
import { installErrorHandling } from '../http/error-handler.ts';
import { useZodRouteSchemas } from '../http/route-schemas.ts';

interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, { operationId?: string; responses?: Record<string, unknown>; requestBody?: unknown; parameters?: unknown[] }>>;
}

let api: InProcessApi;

beforeAll(async () => {
  api = await startInProcessApi('openapi', { AUTH_SECRET: 'openapi-spec-secret-openapi-spec-secret-01' });
});
afterAll(async () => {
  await api?.close();
});

async function openApiDocument(): Promise<OpenApiDocument> {
  const response = await api.app.inject({ url: '/api/auth/open-api/generate-schema' });
  expect(response.statusCode).toBe(200);
  return response.json<OpenApiDocument>();
}

describe('GET /api/auth/open-api/generate-schema', () => {
  it('is an OpenAPI 3.1 document holding every route the api serves, each declared (an operation with its id)', async () => {
    const document = await openApiDocument();
    expect(document.openapi).toBe('3.1.0');
    // All but the document itself and its reference page, which describe the others, and CORS's preflight
    // answer (`OPTIONS *`), which a browser sends before an operation and is none itself.
    const shown = listedRoutes(api.app).filter(
      (r) => r.method !== 'HEAD' && r.method !== 'OPTIONS' && r.url !== '/api/auth/open-api/generate-schema' && !r.url.startsWith('/api/auth/reference'),
    );
    expect(shown.length).toBeGreaterThan(60);
    const undeclared = shown
      .filter((r) => document.paths[r.url.replace(/:(\w+)/g, '{$1}').replace(/\*$/, '{*}')]?.[r.method.toLowerCase()]?.operationId === undefined)
      .map((r) => `${r.method} ${r.url}`);
    expect(undeclared).toEqual([]);
  });

  it('documents bodies, queries and answers from the contracts: sign-in takes an email and answers a user', async () => {
    const document = await openApiDocument();
    const signIn = document.paths['/api/auth/sign-in/email']!.post!;
    expect(signIn.operationId).toBe('signInEmail');
    expect(JSON.stringify(signIn.requestBody)).toContain('"email"');
    expect(Object.keys(signIn.responses!)).toEqual(expect.arrayContaining(['200', '4XX']));
    expect(JSON.stringify(signIn.responses!['200'])).toContain('"emailVerified"');
    const listMembers = document.paths['/api/auth/organization/list-members']!.get!;
    expect(JSON.stringify(listMembers.parameters)).toContain('"organizationId"');
  });
});

describe('the OpenAPI document, for generators', () => {
  it('validates: every $ref resolves to a schema the document holds, and each operationId is used once', async () => {
    const document = await openApiDocument();
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeDefined();
    const ids = Object.values(document.paths).flatMap((operations) => Object.values(operations).map((o) => o.operationId));
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
  });

  it('generates a typed client (openapi-typescript) that type-checks against its use', async () => {
    const document = await openApiDocument();
    const types = astToString(await openapiTS(document as never));
    const dir = await mkdtemp(path.join(tmpdir(), 'portcullis-openapi-'));
    try {
      await writeFile(path.join(dir, 'schema.ts'), types);
      // What a client written against the generated types relies on: a body, an answer, an error's code.
      await writeFile(
        path.join(dir, 'use.ts'),
        `import type { paths, components } from './schema';
type SignIn = paths['/api/auth/sign-in/email']['post'];
export const body: SignIn['requestBody'] extends { content: { 'application/json': infer B } } ? B : never = { email: 'a@example.com', password: 'p' };
export type Answer = SignIn['responses'][200]['content']['application/json']['user']['emailVerified'];
export const code: components['schemas']['ErrorAnswer']['code'] = 'INVALID_EMAIL_OR_PASSWORD';
export type AuditEvents = paths['/ops/audit/events']['get']['responses'][200]['content']['application/json']['events'][number]['hash'];
`,
      );
      const program = ts.createProgram([path.join(dir, 'use.ts')], { strict: true, noEmit: true, skipLibCheck: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler });
      const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      expect(problems).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('GET /api/auth/reference', () => {
  it('answers an HTML reference page over the document, its scripts served by this process', async () => {
    const page = await api.app.inject({ url: '/api/auth/reference' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    const scripts = [...page.body.matchAll(/<script[^>]+src="([^"]+)"/g)].map((m) => m[1]!);
    expect(scripts.length).toBeGreaterThan(0);
    let initializer = '';
    for (const script of scripts) {
      const scriptUrl = new URL(script, 'http://localhost/api/auth/reference/');
      expect(scriptUrl.host).toBe('localhost');
      const served = await api.app.inject({ url: scriptUrl.pathname });
      expect(served.statusCode, scriptUrl.pathname).toBe(200);
      if (scriptUrl.pathname.endsWith('swagger-initializer.js')) initializer = served.body;
    }
    // The page reads the document this process generates, not a copy.
    expect(initializer).toContain('/api/auth/open-api/generate-schema');
  });
});

describe('answers held to their declaration (AUTH_CHECK_ANSWERS)', () => {
  const declared = endpoint({
    operationId: 'spec',
    method: 'GET',
    path: '/spec',
    summary: 'spec',
    tag: 'Spec',
    auth: 'public',
    query: z.object({ stray: z.enum(['true', 'false']).default('false') }),
    answer: z.object({ id: z.string(), createdAt: z.string() }),
  });

  async function specApp() {
    const app = Fastify();
    installErrorHandling(app);
    useZodRouteSchemas(app);
    checkAnswersAgainstDeclarations(app);
    route(app, declared, async (request) => (request.query.stray === 'true' ? { id: 1, createdAt: new Date(0) } : { id: 'a', createdAt: 'b' }));
    await app.ready();
    return app;
  }

  it('lets an answer of the declared shape through as it is', async () => {
    const app = await specApp();
    const response = await app.inject({ url: '/spec' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ id: 'a', createdAt: 'b' });
  });

  it('turns an answer that strays from its declaration into a 500, and a bad query into the catalogue\'s 400', async () => {
    const app = await specApp();
    const strayed = await app.inject({ url: '/spec?stray=true' });
    expect(strayed.statusCode).toBe(500);
    expect(strayed.json()).toMatchObject({ code: 'INTERNAL_SERVER_ERROR' });
    const refused = await app.inject({ url: '/spec?stray=maybe' });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ code: 'INVALID_QUERY_PARAMETERS' });
  });
});
