import os from 'node:os';
import argon2 from 'argon2';
import { parseBetterAuthScryptHash, verifyBetterAuthScrypt } from './better-auth-scrypt.ts';

/** What one argon2id hash costs: what an app's owners set (`AUTH_PASSWORD_ARGON2_*`), every new hash made with it. */
export interface Argon2idCost {
  readonly memoryKiB: number;
  readonly iterations: number;
  readonly parallelism: number;
}

/** OWASP's argon2id minimum (m=19 MiB, t=2, p=1), as DESIGN.md fixes it: the cost unless the owners set another. */
export const DEFAULT_ARGON2ID_COST: Argon2idCost = { memoryKiB: 19_456, iterations: 2, parallelism: 1 };

/** The default cost as the argon2 package's options. */
export const ARGON2ID_PARAMETERS = argon2Options(DEFAULT_ARGON2ID_COST);

function argon2Options(cost: Argon2idCost): argon2.HashOptions {
  return { type: argon2.argon2id, memoryCost: cost.memoryKiB, timeCost: cost.iterations, parallelism: cost.parallelism };
}

/**
 * Whether a stored hash is what `hashPassword` would make today: argon2id, version 0x13, at `cost`. Anything
 * else (a better-auth scrypt hash, an argon2 hash at another cost) is replaced at the next sign-in that proves
 * the password. Reads only the hash's PHC header (`$argon2id$v=19$m=19456,p=1,t=2$<salt>$<hash>`; the
 * argon2 package writes the parameters in name order, older writers m, t, p), so a current hash costs nothing.
 */
export function passwordHashIsCurrent(hash: string, cost: Argon2idCost): boolean {
  const [empty, algorithm, version, parameters] = hash.split('$', 4);
  if (empty !== '' || algorithm !== 'argon2id' || version !== `v=${0x13}` || parameters === undefined) return false;
  const given = new Map(parameters.split(',').map((pair) => pair.split('=', 2) as [string, string | undefined]));
  const wanted: Record<string, number> = { m: cost.memoryKiB, t: cost.iterations, p: cost.parallelism };
  return given.size === 3 && Object.entries(wanted).every(([name, value]) => given.get(name) === String(value));
}

/**
 * Admits at most `limit` argon2 computations at once, first come first served. Each one is 19 MiB of
 * memory-bound work on a libuv thread: more of them than cores only time-slice against each other, evicting
 * each other's blocks from the caches, so every one takes longer and the process gets fewer done per second.
 * A queue also keeps threadpool threads free for the file and DNS work that shares the pool.
 */
export class HashingLanes {
  private running = 0;
  private readonly queue: (() => void)[] = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new Error(`hashing lanes: limit must be a positive integer, got ${limit}`);
  }

  /** Computations running or waiting for a lane. */
  get occupied(): number {
    return this.running + this.queue.length;
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((admit) => this.queue.push(admit));
    else this.running += 1;
    try {
      return await work();
    } finally {
      // The slot passes straight to the next in line, so `running` counts it without a gap a newcomer could take.
      const next = this.queue.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}

const lanes = new HashingLanes(os.availableParallelism());

/**
 * Password computations running or queued in this process. Each belongs to a command (a sign-in, a sign-up,
 * a password change) that appends once it is done, so the projector may wait for them (see
 * `CommandHandlerOptions.othersUnderWay`); a password change computes two at once and appends once.
 */
export function passwordWorkUnderWay(): number {
  return lanes.occupied;
}

/**
 * A password as it is hashed and compared: Unicode NFKC, as NIST SP 800-63B (5.1.1.2) advises, so that one
 * password typed on two keyboards (a precomposed `é` or `e` and a combining accent, a full-width `Ａ` from an
 * IME, a `ﬁ` ligature) is one password. better-auth 1.x normalizes the same way (@better-auth/utils/password).
 */
function normalizePassword(password: string): string {
  return password.normalize('NFKC');
}

/** A password's length as its bounds count it: code points of its normalized form, not UTF-16 units. */
export function passwordLength(password: string): number {
  let length = 0;
  for (const _codePoint of normalizePassword(password)) length += 1;
  return length;
}

export function hashPassword(password: string, cost: Argon2idCost): Promise<string> {
  return lanes.run(() => argon2.hash(normalizePassword(password), argon2Options(cost)));
}

async function matches(hash: string, password: string): Promise<boolean> {
  try {
    return await lanes.run(() => argon2.verify(hash, password));
  } catch {
    return false;
  }
}

/**
 * Whether `password` is the one `hash` was made from: an argon2 hash of ours, or a better-auth scrypt hash
 * (`<salt>:<key>`, see better-auth-scrypt.ts); a malformed hash matches nothing and throws nothing. Hashes made before passwords were normalized hold the
 * password as it was typed, so when normalizing changes it, and the normalized form does not match, the form
 * as typed is tried too: those accounts keep signing in with what they always typed. That second try can
 * only ever match such a hash: NFKC is idempotent, so a form it changes is never a normalized password.
 * It costs a second argon2 run, and only for passwords that normalizing changes (decoy checks included, so
 * the time taken still does not tell whether an account exists).
 */
export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  const normalized = normalizePassword(password);
  if (!hash.startsWith('$argon2')) {
    // A better-auth scrypt hash (an account brought over from better-auth): made from the normalized form
    // only, so one try. Anything else that is no argon2 hash either matches no password.
    const scrypt = parseBetterAuthScryptHash(hash);
    // A well-formed hash that scrypt fails on is a fault of ours (memory), not a wrong password: it throws.
    return scrypt !== null && lanes.run(() => verifyBetterAuthScrypt(scrypt, normalized));
  }
  if (await matches(hash, normalized)) return true;
  return normalized !== password && matches(hash, password);
}

/** One decoy per cost (a process has one cost; tests may try several). */
const decoyHashes = new Map<string, Promise<string>>();

/**
 * Spends the same work as a real verification at today's cost, for sign-ins of unknown users, so that
 * response time does not tell which emails have accounts. (Accounts still holding a better-auth scrypt hash or
 * an argon2 hash at an older cost take their own hash's time until their next sign-in replaces it.)
 */
export async function verifyAgainstDecoy(password: string, cost: Argon2idCost): Promise<void> {
  const key = `${cost.memoryKiB},${cost.iterations},${cost.parallelism}`;
  let decoy = decoyHashes.get(key);
  if (!decoy) decoyHashes.set(key, (decoy = hashPassword('decoy password that no account has', cost)));
  await verifyPassword(await decoy, password);
}
