import { expectOk, type HttpSession, type HttpTarget } from '../lib/http-session.ts';

/** A signed-up user with its own browser-like session, as each bench client is. */
export interface Account {
  readonly session: HttpSession;
  readonly email: string;
  readonly userId: string;
  password: string;
}

/** A client of the write scenarios: an account with an organization of its own, and more it may invite to. */
export interface Actor extends Account {
  readonly index: number;
  readonly homeOrganizationId: string;
  /** Organizations this actor owns besides its home: what invite + accept invites to, one per pair. */
  readonly spareOrganizations: string[];
}

export async function signUp(target: HttpTarget, label: string): Promise<Account> {
  const session = target.session();
  const email = `${label}@example.com`;
  const password = `bench-password-${label}`;
  const answer = await session.post('/sign-up/email', { name: label, email, password });
  const { user } = expectOk<{ user: { id: string } }>(answer, `sign-up of ${email} at ${target.name}`);
  return { session, email, userId: user.id, password };
}

export async function createOrganization(session: HttpSession, slug: string): Promise<string> {
  const answer = await session.post('/organization/create', { name: slug, slug });
  return expectOk<{ id: string }>(answer, `create organization ${slug}`).id;
}

/** Runs `work` over `items`, `concurrency` at a time, in order of the items. */
export async function inBatches<T, R>(items: readonly T[], concurrency: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, lane));
  return results;
}

/**
 * Signs up `count` actors, each creating its home organization. Few at a time: a sign-up hashes a password
 * (scrypt takes a quarter of a second of CPU on this machine), and the clients must be ready, not measured.
 */
export async function provisionActors(target: HttpTarget, runLabel: string, count: number): Promise<Actor[]> {
  return inBatches(
    Array.from({ length: count }, (_, i) => i),
    4,
    async (index) => {
      const account = await signUp(target, `${runLabel}-actor${index}`);
      const homeOrganizationId = await createOrganization(account.session, `${runLabel}-home${index}`);
      return { ...account, index, homeOrganizationId, spareOrganizations: [] };
    },
  );
}
