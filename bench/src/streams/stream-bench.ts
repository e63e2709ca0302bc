import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { streams } from '@portcullis/contracts';
import { DEFAULT_ARGON2ID_COST, hashPassword, PostgresEventStore } from '@portcullis/platform';
import { runClosedLoop, type LoopFigures, type Operation, type Outcome, type StepTiming } from '../lib/closed-loop.ts';
import { createBenchDatabase } from '../lib/database.ts';
import { expectOk, HttpTarget, type HttpAnswer, type HttpSession } from '../lib/http-session.ts';
import { appendActiveOrganizationToggles, appendMembers, appendSignedUpUsers } from '../lib/log-prefill.ts';
import { startDeployment, waitForProjections } from '../lib/portcullis.ts';
import { log } from '../lib/progress.ts';
import { deleteKeysWithPrefix } from '../lib/redis-keys.ts';
import type { Teardown } from '../lib/teardown.ts';
import { settings } from '../settings.ts';
import { createOrganization, signUp, type Account } from '../writes/actors.ts';
import { reportChildLogs, UNREACHABLE_MEMBERSHIP_LIMIT } from '../writes/write-bench.ts';
import { streamsReport } from './streams-report.ts';

/** A session's set-active measured at one length of its stream. */
export interface StreamFigures {
  readonly label: string;
  /** Events in the session's stream when measuring began. */
  readonly eventsAtStart: number;
  readonly writers: number;
  readonly loop: LoopFigures;
  /** Events the stream gained over the run, per successful command (a command that changes nothing appends none). */
  readonly appendedPerCommand: number;
}

export interface LargeOrganizationFigures {
  readonly members: number;
  readonly loop: LoopFigures;
}

interface SessionOfUser {
  readonly http: HttpSession;
  readonly sessionId: string;
  readonly activeOrganizationId: string | null;
}

/** A window that would hold only a few commands stays open until it holds this many (or the time is up). */
const SLOW_ENOUGH = { operations: 10, longestS: 120 };

const succeeded = (answer: HttpAnswer): boolean => answer.status >= 200 && answer.status <= 299;

/**
 * Issue 22, measured as a user would, through HTTP: one session toggling `POST /organization/set-active`
 * between an organization and none, on a fresh stream and on streams of 10,000 and 100,000 events (written
 * to the log beforehand as the api writes them); 32 writers on one session; and invite + accept on an
 * organization of 10,000 members. Portcullis only.
 */
export async function runStreams(teardown: Teardown): Promise<string> {
  const runId = randomBytes(4).toString('hex');
  const database = await createBenchDatabase(settings.adminUrl);
  teardown.add(`drop database ${database.name}`, () => database.drop());
  const keyPrefix = `bench:${runId}:streams:`;
  teardown.add(`delete Redis keys ${keyPrefix}*`, () => deleteKeysWithPrefix(settings.redisUrl, keyPrefix));
  log(`streams: starting Portcullis (api + projector) on ${database.name}`);
  const deployment = await startDeployment({
    databaseUrl: database.url,
    secret: randomBytes(32).toString('hex'),
    redis: { url: settings.redisUrl, keyPrefix },
    rateLimit: settings.rateLimit,
    membershipLimit: UNREACHABLE_MEMBERSHIP_LIMIT,
  });
  teardown.add('stop Portcullis (streams)', () => deployment.stop());
  const store = new PostgresEventStore({ databaseUrl: database.url, maximumPoolSize: 2 });
  teardown.add('close the bench event store', () => store.close());
  const versions = new pg.Client({ connectionString: database.url });
  await versions.connect();
  teardown.add('close the stream version reader', () => versions.end());
  const streamVersion = async (sessionId: string): Promise<number> => {
    const { rows } = await versions.query<{ v: number }>('SELECT coalesce(max(stream_version), 0)::int AS v FROM events WHERE stream_id = $1', [
      streams.session(sessionId),
    ]);
    return rows[0]!.v;
  };
  const target = new HttpTarget('Portcullis', deployment.authUrl);
  teardown.add('close Portcullis connections (streams)', async () => target.close());

  const owner = await signUp(target, `${runId}-streams-owner`);
  const organizationId = await createOrganization(owner.session, `${runId}-streams`);
  const [freshFirst, short, long, freshSecond, shared] = [
    await signIn(target, owner),
    await signIn(target, owner),
    await signIn(target, owner),
    await signIn(target, owner),
    await signIn(target, owner),
  ];
  // Everything that goes through the api first: with a hundred thousand events to project, its writes would
  // wait out read-your-writes.
  const largeOwner = await signUp(target, `${runId}-large-owner`);
  const largeOrganizationId = await createOrganization(largeOwner.session, `${runId}-large`);
  const [shortLength, longLength] = settings.streamLengths as [number, number];
  for (const [session, length] of [
    [short, shortLength],
    [long, longLength],
  ] as const) {
    const count = length - (await streamVersion(session.sessionId));
    log(`streams: writing ${count} set-active events to session-${session.sessionId} (to ${length})`);
    await appendActiveOrganizationToggles(store, { sessionId: session.sessionId, userId: owner.userId, organizationId, activeNow: session.activeOrganizationId, count });
  }

  log(`streams: writing ${settings.largeOrganizationMembers} users and their memberships of one organization to the log`);
  const passwordHash = await hashPassword(`bench-password-${runId}`, DEFAULT_ARGON2ID_COST);
  const members = await appendSignedUpUsers(store, { count: settings.largeOrganizationMembers, label: `${runId}-member`, passwordHash, withSessions: false });
  await appendMembers(store, { organizationId: largeOrganizationId, userIds: members.map((m) => m.userId) });
  const invitees = await appendSignedUpUsers(store, { count: settings.invitePairs, label: `${runId}-invitee`, passwordHash, withSessions: true });
  log('streams: waiting for the projections to apply what was written');
  await waitForProjections(deployment, 15 * 60_000);

  const single = async (label: string, session: SessionOfUser): Promise<StreamFigures> => {
    const eventsAtStart = await streamVersion(session.sessionId);
    log(`streams: set-active, one writer, ${label} (${eventsAtStart} events)`);
    const loop = await runClosedLoop({
      operations: [toggler(session.http, organizationId, await activeOrganization(session.http))],
      warmupS: settings.warmupS,
      durationS: settings.durationS,
      atLeast: SLOW_ENOUGH,
    });
    return { label, eventsAtStart, writers: 1, loop, appendedPerCommand: ((await streamVersion(session.sessionId)) - eventsAtStart) / loop.okOverall };
  };
  const figures: StreamFigures[] = [
    await single('fresh stream (before)', freshFirst),
    await single(`stream of ${shortLength.toLocaleString('en-US')} events`, short),
    await single(`stream of ${longLength.toLocaleString('en-US')} events`, long),
    await single('fresh stream (after)', freshSecond),
  ];

  const writers = settings.concurrentWriters;
  const sharedStart = await streamVersion(shared.sessionId);
  log(`streams: set-active, ${writers} writers on one fresh session`);
  const sharedActive = await activeOrganization(shared.http);
  const sharedLoop = await runClosedLoop({
    // Each writer toggles as if alone, half of them starting the other way: the session's state is whoever wrote last.
    operations: Array.from({ length: writers }, (_, i) =>
      toggler(shared.http.copy(), organizationId, i % 2 === 0 ? sharedActive : sharedActive === null ? organizationId : null),
    ),
    warmupS: settings.warmupS,
    durationS: settings.durationS,
    atLeast: SLOW_ENOUGH,
  });
  figures.push({
    label: `${writers} writers on one fresh stream`,
    eventsAtStart: sharedStart,
    writers,
    loop: sharedLoop,
    appendedPerCommand: ((await streamVersion(shared.sessionId)) - sharedStart) / sharedLoop.okOverall,
  });

  log(`streams: invite + accept on an organization of ${settings.largeOrganizationMembers} members, one client`);
  let nextInvitee = 0;
  const largeLoop = await runClosedLoop({
    operations: [
      async () => {
        const invitee = invitees[nextInvitee++];
        if (!invitee) return 'exhausted';
        return inviteAndAccept(largeOwner.session, target.session().useBearer(invitee.token!), invitee.email, largeOrganizationId);
      },
    ],
    warmupS: settings.warmupS,
    durationS: settings.durationS,
    // A pair took half a minute and more on an organization of 10,000 members when this was written.
    atLeast: { operations: 3, longestS: 240 },
  });
  reportChildLogs([deployment.api, deployment.projector]);
  return streamsReport(figures, { members: settings.largeOrganizationMembers, loop: largeLoop });
}

async function signIn(target: HttpTarget, account: Account): Promise<SessionOfUser> {
  const http = target.session();
  expectOk(await http.post('/sign-in/email', { email: account.email, password: account.password }), 'sign-in');
  const answer = expectOk<{ session: { id: string; activeOrganizationId: string | null } }>(await http.get('/get-session'), 'get-session');
  return { http, sessionId: answer.session.id, activeOrganizationId: answer.session.activeOrganizationId };
}

async function activeOrganization(http: HttpSession): Promise<string | null> {
  return expectOk<{ session: { activeOrganizationId: string | null } }>(await http.get('/get-session'), 'get-session').session.activeOrganizationId;
}

function toggler(http: HttpSession, organizationId: string, activeNow: string | null): Operation {
  let active = activeNow;
  return async (): Promise<Outcome> => {
    const next = active === null ? organizationId : null;
    const answer = await http.post('/organization/set-active', { organizationId: next });
    if (succeeded(answer)) active = next;
    return { ok: succeeded(answer), status: String(answer.status) };
  };
}

async function inviteAndAccept(owner: HttpSession, invitee: HttpSession, email: string, organizationId: string): Promise<Outcome> {
  const timings: StepTiming[] = [];
  const timed = async (step: string, send: () => Promise<HttpAnswer>): Promise<HttpAnswer> => {
    const sent = performance.now();
    const answer = await send();
    timings.push({ step, ms: performance.now() - sent });
    return answer;
  };
  const invite = await timed('invite', () => owner.post('/organization/invite-member', { email, role: 'member', organizationId }));
  if (!succeeded(invite)) return { ok: false, status: String(invite.status), steps: timings };
  const invitationId = invite.json<{ id: string }>().id;
  const accept = await timed('accept', () => invitee.post('/organization/accept-invitation', { invitationId }));
  return { ok: succeeded(accept), status: String(accept.status), steps: timings };
}
