import { DomainError } from '@portcullis/contracts';

/** What an admin's `data` sets besides role and email (handled with their own permissions). */
export interface UserFieldsChange {
  readonly profile?: { name?: string; image?: string | null };
  readonly image?: string | null;
  readonly emailVerified?: boolean;
  readonly ban?: { readonly reason: string; readonly expiresAt: string | null };
  readonly unban?: boolean;
}

/** The last instant an ISO date of four-digit years names: past it, `toISOString` writes `+010000-…`, which Postgres refuses. */
const LAST_STORABLE_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

function isStorableDate(value: string): boolean {
  const ms = Date.parse(value);
  return Number.isFinite(ms) && ms >= 0 && ms <= LAST_STORABLE_MS;
}

function refuse(field: string, problem: string): never {
  throw new DomainError('VALIDATION_ERROR', { details: `[body.data.${field}] ${problem}` });
}

/**
 * Reads the user fields an admin's `data` may hold (create-user and update-user). better-auth writes any
 * column it is given and fails on others; the log holds only facts it has events for, so a field no event
 * records is refused by name rather than dropped.
 */
export function decideUserFields(data: Readonly<Record<string, unknown>>, options: { readonly creating: boolean }): UserFieldsChange {
  const change: { -readonly [K in keyof UserFieldsChange]: UserFieldsChange[K] } = {};
  const profile: { name?: string; image?: string | null } = {};
  for (const [field, value] of Object.entries(data)) {
    switch (field) {
      case 'name':
        // The body's name wins on create, as in better-auth.
        if (options.creating) break;
        if (typeof value !== 'string' || value.length > 256) refuse(field, 'must be a string of at most 256 characters');
        profile.name = value;
        break;
      case 'image':
        if (value !== null && (typeof value !== 'string' || value.length > 2048)) refuse(field, 'must be a URL or null');
        profile.image = value;
        change.image = value;
        break;
      case 'emailVerified':
        if (typeof value !== 'boolean') refuse(field, 'must be a boolean');
        change.emailVerified = value;
        break;
      case 'banned':
        if (typeof value !== 'boolean') refuse(field, 'must be a boolean');
        break;
      case 'banReason':
        if (value !== null && typeof value !== 'string') refuse(field, 'must be a string or null');
        break;
      case 'banExpires':
        if (value !== null && (typeof value !== 'string' || !isStorableDate(value))) refuse(field, 'must be a date before the year 10000, or null');
        break;
      default:
        refuse(field, 'is not a user field this server records');
    }
  }
  if (data.banned === true) {
    const reason = typeof data.banReason === 'string' && data.banReason !== '' ? data.banReason : 'No reason';
    const expiresAt = typeof data.banExpires === 'string' ? new Date(data.banExpires).toISOString() : null;
    change.ban = { reason, expiresAt };
  } else if (data.banned === false) {
    change.unban = true;
  }
  if (!options.creating && Object.keys(profile).length > 0) change.profile = profile;
  return change;
}
