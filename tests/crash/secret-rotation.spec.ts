import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cookieNames, cookieSignature, DEFAULT_PASSWORD, signIn, signUp, uniqueEmail, type SessionAnswerJson } from '../support/auth.ts';
import { startMailSystem, type MailSystem } from '../support/mail-system.ts';
import { inheritedEnv, spawnService, waitFor, type ServiceProcess } from '../support/processes.ts';
import { testRedisUrl } from '../support/redis.ts';
import { linkIn } from '../support/smtp.ts';
import { HttpClient } from '../support/system.ts';
import { nodeArgumentsFor, serviceEntries } from '../../scripts/build.ts';

const secret = (label: string): string => `${label}-${randomBytes(24).toString('base64url')}`;
const A = secret('a');
const B = secret('b');
const C = secret('c');

const LOAD_USERS = 12;
const MAIL_USERS_PER_ROLL_OUT = 2;

interface Tracked {
  readonly label: string;
  readonly client: HttpClient;
  readonly email: string;
  readonly name: string;
}

interface Person {
  readonly email: string;
  readonly name: string;
}

interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

interface KeysStatus {
  readonly ring: ReadonlyArray<{ readonly wrappedBy: string; readonly keys: number }>;
  readonly unrecorded: number;
  readonly outsideRing: number;
  readonly removable: readonly number[];
}

/**
 * Two rotations of the secret ring under sign-in load, as docs/operations.md ("Rotating secrets") tells an
 * operator: A alone; B added as the newest (B,A) and the three processes restarted with it; `keys rotate`
 * while the load runs; then C (C,B,A), rotated again; then A and B dropped (C). What it shows:
 *
 * - no session signed out: every get-session of the load, before and after each change, answers its own user.
 *   A cookie signed with an older secret is signed again with the newest at its next get-session, so once
 *   each session in use has been seen under C, dropping A and B signs none of them out. A session left idle
 *   since the start (its cookie still signed with A) does end when A is dropped: that is what dropping
 *   means, and why the procedure waits for such cookies to expire, or accepts it;
 * - no mail dead-lettered: mail queued (sealed or signed) under the newest secret while no mailer ran is
 *   delivered by the mailer of the next ring, and its links work;
 * - no personal data lost: every user's name and email read through get-session and the admin list after
 *   each rotation, and after the old secrets are gone, and `keys status` shows every key under the newest.
 */
describe('secret rotation without loss', () => {
  let system: MailSystem;
  let api: ServiceProcess;
  let projector: ServiceProcess;
  let mailer: ServiceProcess;
  const spawned: ServiceProcess[] = [];
  let ring: readonly string[] = [A];
  let adminId: string;
  let admin: HttpClient;
  const sessions: Tracked[] = [];
  const people: Person[] = [];
  const signedOut: string[] = [];
  let answered = 0;
  let unavailable = 0;
  let loadRunning = false;
  let load: Promise<void> = Promise.resolve();
  let dormant: Tracked;

  const client = (): HttpClient => new HttpClient(system.authUrl);
  const envFor = (secrets: readonly string[]): Record<string, string> => ({
    ...system.env,
    AUTH_SECRET: '',
    AUTH_SECRETS: secrets.join(','),
    ADMIN_USER_IDS: adminId,
  });

  beforeAll(async () => {
    system = await startMailSystem({ redis: testRedisUrl() !== null, env: { AUTH_SECRET: '', AUTH_SECRETS: A } });
    ({ api, projector, mailer } = system);
  }, 180_000);

  afterAll(async () => {
    loadRunning = false;
    await load;
    await Promise.all(spawned.map((process) => process.stop()));
    await system?.stop();
  });

  /** The built `keys` command, with the ring given, as an operator runs it beside the services. */
  function keys(secrets: readonly string[], ...args: string[]): Promise<CliResult> {
    const entry = serviceEntries.keys.built;
    return new Promise((resolve) => {
      execFile(process.execPath, [...nodeArgumentsFor(entry), entry, ...args], { env: { ...inheritedEnv(), ...envFor(secrets) } }, (error, stdout, stderr) => {
        resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr });
      });
    });
  }

  async function keysStatus(secrets: readonly string[]): Promise<KeysStatus> {
    const status = await keys(secrets, 'status', '--json');
    expect(status.code, status.stderr).toBe(0);
    return JSON.parse(status.stdout) as KeysStatus;
  }

  async function track(label: string, email: string, name: string, signedIn: HttpClient): Promise<Tracked> {
    const tracked = { label, client: signedIn, email, name };
    sessions.push(tracked);
    return tracked;
  }

  /** One get-session: an answer that is not this session's user is a session signed out. */
  async function check(session: Tracked, when: string): Promise<void> {
    let response;
    try {
      response = await session.client.get<SessionAnswerJson | null>('get-session');
    } catch {
      // No answer at all: the api process is being restarted. Nothing was said about the session; the load
      // waits for an api to answer again.
      unavailable += 1;
      await waitFor(async () => {
        const response = await fetch(`${system.baseUrl}/readyz`).catch(() => null);
        await response?.body?.cancel();
        return response !== null;
      }, {
        timeoutMs: 60_000,
        message: 'an api to answer again',
      });
      return;
    }
    if (response.status === 200 && response.json?.user.email === session.email && response.json.user.name === session.name) answered += 1;
    else signedOut.push(`${session.label} ${when}: ${response.status} ${response.text.slice(0, 200)}`);
  }

  /** Steady load: get-session of every tracked session in turn, and a fresh sign-in every few requests. */
  function startLoad(): void {
    loadRunning = true;
    load = (async () => {
      for (let turn = 0; loadRunning; turn += 1) {
        const session = sessions[turn % sessions.length]!;
        if (session === dormant) continue;
        await check(session, `in the load (ring ${ring.length})`);
        if (turn % 7 === 0 && sessions.length < 60) {
          const user = sessions[turn % LOAD_USERS]!;
          const fresh = client();
          const response = await fresh.post('sign-in/email', { email: user.email, password: DEFAULT_PASSWORD }).catch(() => null);
          if (response?.status === 200) await track(`${user.label}, signed in under ring ${ring.length}`, user.email, user.name, fresh);
        }
      }
    })();
  }

  function startServices(secrets: readonly string[]): void {
    const env = envFor(secrets);
    projector = spawnService({ name: 'projector', entry: serviceEntries.projector.built, env });
    api = spawnService({ name: 'api', entry: serviceEntries.api.built, env });
    mailer = spawnService({ name: 'mailer', entry: serviceEntries.mailer.built, env });
    spawned.push(projector, api, mailer);
  }

  /** Mail queued under the ring's newest while no mailer runs: a reset link and a verification link each. */
  async function queueMailWithoutMailer(): Promise<Array<{ person: Person; kind: 'reset' | 'verify' }>> {
    await mailer.stop();
    const queued: Array<{ person: Person; kind: 'reset' | 'verify' }> = [];
    for (let i = 0; i < MAIL_USERS_PER_ROLL_OUT; i += 1) {
      const person = { email: uniqueEmail(`mail-${ring.length}-${i}`), name: `Mail ${ring.length}.${i}` };
      people.push(person);
      await signUp(client(), { ...person });
      const kind = i % 2 === 0 ? 'reset' : 'verify';
      const asked =
        kind === 'reset'
          ? await client().post('request-password-reset', { email: person.email, redirectTo: '/reset' })
          : await client().post('send-verification-email', { email: person.email, callbackURL: '/verified' });
      expect(asked.status, asked.text).toBe(200);
      queued.push({ person, kind });
    }
    return queued;
  }

  /** The mail queued before the roll-out arrives, and its link does what it says under the new ring. */
  async function expectDeliveredAndWorking(queued: Array<{ person: Person; kind: 'reset' | 'verify' }>): Promise<void> {
    for (const { person, kind } of queued) {
      const mail = await system.smtp!.waitForMail(person.email, { timeoutMs: 60_000 });
      const link = linkIn(mail);
      if (kind === 'reset') {
        const token = new URL(link).pathname.split('/').at(-1)!;
        const reset = await client().post('reset-password', { token, newPassword: `${DEFAULT_PASSWORD} again` });
        expect(reset.status, reset.text).toBe(200);
        await signIn(client(), { email: person.email, password: `${DEFAULT_PASSWORD} again` });
      } else {
        const browser = client();
        const verified = await browser.get(link);
        expect(verified.status, verified.text).toBe(302);
        expect(verified.headers.get('location')).toBe('/verified');
        const signedIn = await signIn(browser, { email: person.email });
        expect(signedIn.user.emailVerified).toBe(true);
      }
    }
  }

  /** Stops the three processes and starts them with `secrets`, the mail queued meanwhile waiting for the new mailer. */
  async function rollOut(secrets: readonly string[]): Promise<void> {
    const queued = await queueMailWithoutMailer();
    await Promise.all([api.stop(), projector.stop()]);
    ring = secrets;
    startServices(secrets);
    await waitFor(
      async () => {
        const response = await fetch(`${system.baseUrl}/readyz`).catch(() => null);
        await response?.body?.cancel();
        return response?.status === 200;
      },
      { timeoutMs: 60_000, message: `the api on ring ${secrets.length} to be ready\n${api.output().slice(-2000)}` },
    );
    await expectDeliveredAndWorking(queued);
  }

  /** `keys rotate` while the load runs: progress lines, every key then under the newest. */
  async function rotate(secrets: readonly string[]): Promise<void> {
    const before = answered;
    const rotated = await keys(secrets, 'rotate', '--batch-size', '5');
    expect(rotated.code, `${rotated.stdout}\n${rotated.stderr}`).toBe(0);
    const progress = rotated.stdout.split('\n').filter((line) => /^rotate: \d+\/\d+ data keys \(\d+%\), \d+ re-wrapped, \d+ keys\/s$/.test(line));
    expect(progress.length, rotated.stdout).toBeGreaterThan(2);
    expect(rotated.stdout).toMatch(/^rotate: done: \d+ data keys re-wrapped under the newest secret/m);
    // The load ran on while it did.
    await waitFor(() => answered > before + sessions.length, { timeoutMs: 60_000, message: 'the load to go on' });
    const status = await keysStatus(secrets);
    expect(status.ring[0]!.keys).toBeGreaterThan(0);
    expect(status.ring.slice(1).map((member) => member.keys)).toEqual(secrets.slice(1).map(() => 0));
    expect({ unrecorded: status.unrecorded, outsideRing: status.outsideRing }).toEqual({ unrecorded: 0, outsideRing: 0 });
    expect(status.removable).toEqual(secrets.slice(1).map((_, index) => index + 2));
    // Run again, it finds nothing left to do.
    const again = await keys(secrets, 'rotate');
    expect(again.stdout).toMatch(/^rotate: done: 0 data keys re-wrapped/m);
  }

  /** Every person's name and email, through their own session (the load's) and through the admin's list. */
  async function expectEveryonesPersonalData(when: string): Promise<void> {
    for (const session of sessions.slice(0, LOAD_USERS)) await check(session, when);
    const listed = await admin.get<{ users: Array<{ email: string; name: string }>; total: number }>('admin/list-users?limit=200');
    expect(listed.status, listed.text).toBe(200);
    const byEmail = new Map(listed.json.users.map((user) => [user.email, user.name]));
    expect(people.filter((person) => byEmail.get(person.email) !== person.name).map((person) => person.email), when).toEqual([]);
  }

  /** Each session of the load has been answered under the newest secret: its cookie now carries that signature. */
  async function everySessionSignedWith(newest: string): Promise<void> {
    const signedWith = (session: Tracked): boolean => {
      const cookie = decodeURIComponent(session.client.cookie(cookieNames.sessionToken) ?? '');
      const dot = cookie.lastIndexOf('.');
      return dot > 0 && cookie.slice(dot + 1) === cookieSignature(cookie.slice(0, dot), newest);
    };
    await waitFor(() => sessions.filter((session) => session !== dormant).every(signedWith), {
      timeoutMs: 60_000,
      message: 'every session in use to be answered under the newest secret',
    });
  }

  it('rotates twice under sign-in load: no session signed out, no mail dead-lettered, no personal data lost', { timeout: 600_000 }, async () => {
    // Under A alone: the users, their sessions, and a root admin (an admin from the first roll-out on).
    for (let i = 0; i < LOAD_USERS; i += 1) {
      const person = { email: uniqueEmail(`rotation-${i}`), name: `Rotation User ${i}` };
      const browser = client();
      await signUp(browser, person);
      people.push(person);
      await track(`user ${i}`, person.email, person.name, browser);
    }
    const adminPerson = { email: uniqueEmail('rotation-admin'), name: 'Rotation Admin' };
    admin = client();
    adminId = (await signUp(admin, adminPerson)).user.id;
    people.push(adminPerson);
    await track('the admin', adminPerson.email, adminPerson.name, admin);
    const idle = client();
    await signIn(idle, { email: people[0]!.email });
    dormant = await track('a session left idle since A', people[0]!.email, people[0]!.name, idle);
    startLoad();

    // First rotation: B is added as the newest, rolled out, and the keys re-wrapped under it.
    await rollOut([B, A]);
    await expectEveryonesPersonalData('after B,A was rolled out');
    await rotate([B, A]);
    await expectEveryonesPersonalData('after the first rotation');

    // Second rotation: C.
    await rollOut([C, B, A]);
    await rotate([C, B, A]);
    await expectEveryonesPersonalData('after the second rotation');

    // A and B dropped, once every session in use has been answered under C.
    await everySessionSignedWith(C);
    const dormantCookie = dormant.client.cookie(cookieNames.sessionToken);
    await rollOut([C]);
    await expectEveryonesPersonalData('with A and B dropped');
    const status = await keysStatus([C]);
    expect(status).toMatchObject({ unrecorded: 0, outsideRing: 0, removable: [] });
    expect(status.ring).toHaveLength(1);

    loadRunning = false;
    await load;
    for (const session of sessions) if (session !== dormant) await check(session, 'at the end');
    expect(signedOut).toEqual([]);
    // What dropping a secret does: a cookie signed with A and never presented since is no longer accepted.
    expect(dormantCookie).toBeDefined();
    const dropped = await dormant.client.get<SessionAnswerJson | null>('get-session');
    expect({ status: dropped.status, body: dropped.json }).toEqual({ status: 200, body: null });

    const dead = await system.query<{ n: number }>(`SELECT count(*)::int AS n FROM mail_delivery WHERE status <> 'sent'`);
    expect(dead).toEqual([{ n: 0 }]);
    console.info(
      `[secret-rotation] ${answered} get-session answers across 3 roll-outs and 2 rotations, ${sessions.length} sessions, ${unavailable} requests unanswered while the api restarted, ${people.length} people`,
    );
  });
});
