import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEvent, ChainVerification } from '@portcullis/contracts';
import { signUp } from '../support/auth.ts';
import { waitFor } from '../support/processes.ts';
import { HttpClient, startSystem, type System } from '../support/system.ts';
import { nodeArgumentsFor, serviceEntries } from '../../scripts/build.ts';

const KEY = 'audit-system-key-0123456789abcdef0123456';
const { privateKey, publicKey } = generateKeyPairSync('ed25519');

interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * The audit trail end to end: the real api and projector processes, the built CLI (`services/audit/dist/
 * cli.js`) on the same database. Search and export agree between HTTP and the CLI; verify holds on the
 * untouched log, against a signed head, and fails at the position an SQL edit touched.
 */
describe('audit trail: HTTP and the CLI', () => {
  let system: System;
  let dir: string;
  let userId: string;

  function cli(...args: string[]): Promise<CliResult> {
    const entry = serviceEntries.audit.built;
    return new Promise((resolve) => {
      execFile(process.execPath, [...nodeArgumentsFor(entry), entry, ...args], { env: { ...process.env, ...system.env } }, (error, stdout, stderr) => {
        resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr });
      });
    });
  }

  async function search(query: string): Promise<{ events: AuditEvent[]; indexedTo: number }> {
    const response = await fetch(`${system.baseUrl}/ops/audit/events?${query}`, { headers: { 'x-api-key': KEY } });
    expect(response.status).toBe(200);
    return (await response.json()) as { events: AuditEvent[]; indexedTo: number };
  }

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'portcullis-audit-'));
    system = await startSystem({
      env: { AUTH_SERVER_API_KEY: KEY, AUDIT_SIGNING_KEY: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString() },
    });
    const client = new HttpClient(system.authUrl);
    const signedIn = await signUp(client, { name: 'Audited' });
    userId = signedIn.user.id;
    await client.post('update-user', { name: 'Audited Again' });
    const [row] = await system.query<{ head: string }>('SELECT position AS head FROM event_log_head');
    const head = Number(row!.head);
    await waitFor(async () => (await search('limit=1')).indexedTo >= head, { timeoutMs: 20_000, message: 'the audit index to reach the head' });
  });

  afterAll(async () => {
    await system?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('exports the same NDJSON from the CLI as from HTTP', async () => {
    const http = await fetch(`${system.baseUrl}/ops/audit/export?user=${userId}&order=oldest`, { headers: { 'x-api-key': KEY } });
    const overHttp = (await http.text()).trimEnd().split('\n');
    const exported = await cli('export', '--user', userId);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout.trimEnd().split('\n')).toEqual(overHttp);
    expect(overHttp.map((line) => (JSON.parse(line) as AuditEvent).type)).toContain('session.created.v2');
  });

  it('replays a user as of now with the deciders\' models', async () => {
    const replayed = await cli('replay', 'user', userId);
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(JSON.parse(replayed.stdout)).toMatchObject({ id: userId, state: { profile: { name: 'Audited Again' } } });
  });

  it('rebuilds the audit index aside and swaps it in, answering the same search', async () => {
    const before = await search(`user=${userId}&limit=500`);
    const rebuilt = await cli('rebuild');
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(rebuilt.stdout).toMatch(/audit index rebuilt to position \d+/);
    expect((await search(`user=${userId}&limit=500`)).events).toEqual(before.events);
  });

  it('verifies the chain and a signed head, then reports the position an SQL edit touched', async () => {
    const head = await cli('head');
    expect(head.code, head.stderr).toBe(0);
    const headFile = path.join(dir, 'head.json');
    const keyFile = path.join(dir, 'key.pem');
    await writeFile(headFile, head.stdout);
    await writeFile(keyFile, publicKey.export({ format: 'pem', type: 'spki' }).toString());
    const clean = await cli('verify', '--head', headFile, '--public-key', keyFile);
    expect(clean.code, clean.stderr).toBe(0);
    expect(JSON.parse(clean.stdout)).toMatchObject({ ok: true, failure: null });
    // Each check is recorded, and answered over HTTP as the last one.
    const recorded = async () => {
      const response = await fetch(`${system.baseUrl}/ops/audit/verification`, { headers: { 'x-api-key': KEY } });
      expect(response.status).toBe(200);
      return ((await response.json()) as { lastFinished: ChainVerification | null }).lastFinished;
    };
    const cleanCheck = await recorded();
    expect(cleanCheck).toMatchObject({ source: 'cli', status: 'intact', failure: null, verifiedTo: (JSON.parse(clean.stdout) as { verifiedTo: number }).verifiedTo });

    const [edited] = await system.query<{ position: string }>(`SELECT min(position) AS position FROM events WHERE type = 'user.updated.v1'`);
    const position = Number(edited!.position);
    await system.query(`
      BEGIN;
      ALTER TABLE events DISABLE TRIGGER events_append_only;
      UPDATE events SET data = jsonb_set(data, '{name}', '"Someone Else"') WHERE position = ${position};
      ALTER TABLE events ENABLE TRIGGER events_append_only;
      COMMIT;`);
    const tampered = await cli('verify');
    expect(tampered.code).toBe(1);
    expect(JSON.parse(tampered.stdout)).toMatchObject({ ok: false, failure: { position, problem: 'altered' } });
    const tamperedCheck = await recorded();
    expect(tamperedCheck).toMatchObject({ source: 'cli', status: 'broken', verifiedTo: position - 1, failure: { position, problem: 'altered' } });
    expect(tamperedCheck!.id).not.toBe(cleanCheck!.id);
  });

  it('answers a bad command with its usage', async () => {
    const bad = await cli('export', '--ip', 'not-an-address');
    expect(bad.code).toBe(64);
    expect(bad.stderr).toContain('usage: npm run audit');
  });
});
