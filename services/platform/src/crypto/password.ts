import os from 'node:os';
import argon2 from 'argon2';
import { parseBetterAuthScryptHash, verifyBetterAuthScrypt } from './better-auth-scrypt.ts';

/** OWASP's argon2id minimum (m=19 MiB, t=2, p=1), as DESIGN.md fixes it. */
export const ARGON2ID_PARAMETERS = {
  type: argon2.argon2id,
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
} as const;

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
 * IME, a `ﬁ` ligature) is one password. better-auth hashes the string as sent; this is a deviation from it.
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

export function hashPassword(password: string): Promise<string> {
  return lanes.run(() => argon2.hash(normalizePassword(password), ARGON2ID_PARAMETERS));
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

let decoyHash: Promise<string> | null = null;

/**
 * Spends the same work as a real verification, for sign-ins of unknown users, so that response time does
 * not tell which emails have accounts.
 */
export async function verifyAgainstDecoy(password: string): Promise<void> {
  decoyHash ??= hashPassword('decoy password that no account has');
  await verifyPassword(await decoyHash, password);
}
