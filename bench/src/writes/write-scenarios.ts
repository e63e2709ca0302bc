import type { Operation, Outcome, StepTiming } from '../lib/closed-loop.ts';
import type { HttpAnswer, HttpSession, HttpTarget } from '../lib/http-session.ts';
import { settings } from '../settings.ts';
import { createOrganization, inBatches, signUp, type Actor } from './actors.ts';

/** What one more write and the read right after it showed. */
export type ReadBack = 'fresh' | 'stale' | 'failed' | 'exhausted';

/** One client's work in a scenario: the measured operation, and a write checked by the read after it. */
interface ClientWork {
  readonly step: Operation;
  readYourWrite(): Promise<ReadBack>;
}

interface ScenarioRun {
  readonly target: HttpTarget;
  /** One per client, each with its own user, session and home organization. */
  readonly actors: readonly Actor[];
  /** Unique to this server, scenario and client count: names (slugs, emails) made from it never collide. */
  readonly label: string;
}

export interface WriteScenario {
  readonly key: string;
  readonly name: string;
  readonly durationS: number;
  readonly readYourWritesChecks: number;
  prepare(run: ScenarioRun): Promise<ClientWork[]>;
}

const succeeded = (answer: HttpAnswer): boolean => answer.status >= 200 && answer.status <= 299;

function outcomeOf(answer: HttpAnswer, steps?: readonly StepTiming[]): Outcome {
  return { ok: succeeded(answer), status: String(answer.status), ...(steps ? { steps } : {}) };
}

async function timed(step: string, send: () => Promise<HttpAnswer>): Promise<{ answer: HttpAnswer; timing: StepTiming }> {
  const sent = performance.now();
  const answer = await send();
  return { answer, timing: { step, ms: performance.now() - sent } };
}

interface SessionAnswer {
  session: { activeOrganizationId?: string | null };
  user: { name: string };
}

async function currentSession(session: HttpSession): Promise<SessionAnswer | null> {
  const answer = await session.get('/get-session');
  return succeeded(answer) ? answer.json<SessionAnswer | null>() : null;
}

/** A write (`write` answers whether it succeeded) followed at once by the read that must show it. */
async function writeThenRead(write: () => Promise<boolean>, read: () => Promise<boolean>): Promise<ReadBack> {
  if (!(await write())) return 'failed';
  return (await read()) ? 'fresh' : 'stale';
}

/** Toggles the session's active organization between the client's home organization and none. */
const setActive: WriteScenario = {
  key: 'set-active',
  name: 'organization set-active',
  durationS: settings.durationS,
  readYourWritesChecks: settings.readYourWritesChecks,
  prepare: ({ actors }) =>
    Promise.all(
      actors.map(async (actor): Promise<ClientWork> => {
        let active = (await currentSession(actor.session))?.session.activeOrganizationId ?? null;
        const toggle = async (): Promise<HttpAnswer> => {
          const next = active === null ? actor.homeOrganizationId : null;
          const answer = await actor.session.post('/organization/set-active', { organizationId: next });
          if (succeeded(answer)) active = next;
          return answer;
        };
        return {
          step: async () => outcomeOf(await toggle()),
          readYourWrite: () =>
            writeThenRead(
              async () => succeeded(await toggle()),
              async () => ((await currentSession(actor.session))?.session.activeOrganizationId ?? null) === active,
            ),
        };
      }),
    ),
};

const updateUser: WriteScenario = {
  key: 'update-user',
  name: 'update-user (name)',
  durationS: settings.durationS,
  readYourWritesChecks: settings.readYourWritesChecks,
  prepare: async ({ actors, label }) =>
    actors.map((actor): ClientWork => {
      let changes = 0;
      let name = '';
      const rename = (): Promise<HttpAnswer> => {
        name = `${label} ${actor.index} ${++changes}`;
        return actor.session.post('/update-user', { name });
      };
      return {
        step: async () => outcomeOf(await rename()),
        readYourWrite: () =>
          writeThenRead(
            async () => succeeded(await rename()),
            async () => (await currentSession(actor.session))?.user.name === name,
          ),
      };
    }),
};

/**
 * A new organization per request, under a fresh slug. Each one joins the actor's spare organizations, which
 * invite + accept invites to next.
 */
const createOrganizationScenario: WriteScenario = {
  key: 'create-organization',
  name: 'create organization',
  durationS: settings.durationS,
  readYourWritesChecks: settings.readYourWritesChecks,
  prepare: async ({ actors, label }) =>
    actors.map((actor): ClientWork => {
      let created = 0;
      const create = async (): Promise<{ answer: HttpAnswer; slug: string }> => {
        const slug = `${label}-${actor.index}-${++created}`;
        const answer = await actor.session.post('/organization/create', { name: slug, slug });
        if (succeeded(answer)) actor.spareOrganizations.push(answer.json<{ id: string }>().id);
        return { answer, slug };
      };
      return {
        step: async () => outcomeOf((await create()).answer),
        readYourWrite: async () => {
          const { answer, slug } = await create();
          if (!succeeded(answer)) return 'failed';
          const id = answer.json<{ id: string }>().id;
          const read = await actor.session.get(`/organization/get-full-organization?organizationSlug=${encodeURIComponent(slug)}`);
          return succeeded(read) && read.json<{ id?: string } | null>()?.id === id ? 'fresh' : 'stale';
        },
      };
    }),
};

/**
 * The actor invites its invitee to one of its spare organizations and the invitee accepts: the pair is one
 * operation, and each request's latency is kept too. An invitee joins each organization once, so every pair
 * takes the next organization; the invitee is new for each client count, so the organizations serve again.
 */
const inviteAndAccept: WriteScenario = {
  key: 'invite-accept',
  name: 'invite + accept',
  durationS: settings.durationS,
  readYourWritesChecks: settings.readYourWritesChecks,
  prepare: async ({ target, actors, label }) => {
    const needed = Math.ceil(settings.invitePairs / actors.length) + settings.readYourWritesChecks;
    // One actor's organizations in turn: creating them in parallel would race on its own index of them.
    await inBatches(actors, 8, async (actor) => {
      while (actor.spareOrganizations.length < needed) {
        actor.spareOrganizations.push(await createOrganization(actor.session, `${label}-spare-${actor.index}-${actor.spareOrganizations.length}`));
      }
    });
    const invitees = await inBatches(actors, 4, (actor) => signUp(target, `${label}-invitee${actor.index}`));
    return actors.map((actor, i): ClientWork => {
      const invitee = invitees[i]!;
      let next = 0;
      const pair = async (): Promise<{ outcome: Outcome; organizationId: string } | 'exhausted'> => {
        const organizationId = actor.spareOrganizations[next++];
        if (organizationId === undefined) return 'exhausted';
        const invite = await timed('invite', () =>
          actor.session.post('/organization/invite-member', { email: invitee.email, role: 'member', organizationId }),
        );
        if (!succeeded(invite.answer)) return { outcome: outcomeOf(invite.answer, [invite.timing]), organizationId };
        const invitationId = invite.answer.json<{ id: string }>().id;
        const accept = await timed('accept', () => invitee.session.post('/organization/accept-invitation', { invitationId }));
        return { outcome: outcomeOf(accept.answer, [invite.timing, accept.timing]), organizationId };
      };
      return {
        step: async () => {
          const done = await pair();
          return done === 'exhausted' ? done : done.outcome;
        },
        readYourWrite: async () => {
          const done = await pair();
          if (done === 'exhausted') return done;
          if (!done.outcome.ok) return 'failed';
          const read = await invitee.session.get('/organization/get-active-member');
          const member = succeeded(read) ? read.json<{ organizationId?: string; userId?: string } | null>() : null;
          return member?.organizationId === done.organizationId && member.userId === invitee.userId ? 'fresh' : 'stale';
        },
      };
    });
  },
};

/**
 * Each change alternates the actor's password between two values. Two hashes per change (verify the current
 * password, hash the new one) dominate it; the report sets their cost apart.
 */
const changePassword: WriteScenario = {
  key: 'change-password',
  name: 'change-password',
  durationS: settings.changePasswordDurationS,
  // A read that shows a new password is a sign-in with it: one more hash each.
  readYourWritesChecks: Math.min(1, settings.readYourWritesChecks),
  prepare: async ({ target, actors }) =>
    actors.map((actor): ClientWork => {
      const passwords = [actor.password, `${actor.password}-changed`];
      const change = async (): Promise<HttpAnswer> => {
        const next = actor.password === passwords[0] ? passwords[1]! : passwords[0]!;
        const answer = await actor.session.post('/change-password', { currentPassword: actor.password, newPassword: next, revokeOtherSessions: false });
        if (succeeded(answer)) actor.password = next;
        return answer;
      };
      return {
        step: async () => outcomeOf(await change()),
        readYourWrite: () =>
          writeThenRead(
            async () => succeeded(await change()),
            async () => succeeded(await target.session().post('/sign-in/email', { email: actor.email, password: actor.password })),
          ),
      };
    }),
};

export const writeScenarios: readonly WriteScenario[] = [setActive, updateUser, createOrganizationScenario, inviteAndAccept, changePassword];
