import type { EventActor } from '@portcullis/contracts';

/** What a sentence may name a user by: their email where the user table knows it, else their id. */
export type UserLabels = ReadonlyMap<string, string>;

/** What a sentence may name an organization by: its name where known (a deleted one's last), else its id. */
export type OrganizationLabels = ReadonlyMap<string, string>;

export interface SentenceInput {
  readonly type: string;
  readonly data: Record<string, unknown>;
  readonly actor: EventActor;
  readonly ipAddress: string | null | undefined;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : value === null || value === undefined ? '?' : JSON.stringify(value);
}

/**
 * One sentence for an event, as an auditor reads it ("alice@example.com signed in from 203.0.113.7").
 * Pure: the labels of the users and organizations it names come in. Event types without a sentence of their own
 * get one built from the type's name, so a new event is never shown without words.
 */
export function auditSentence(input: SentenceInput, labels: UserLabels, organizations: OrganizationLabels = new Map()): string {
  const { data, actor } = input;
  const user = (id: unknown): string => (typeof id === 'string' ? (labels.get(id) ?? `user ${id}`) : 'someone');
  const who = actor.id ? user(actor.id) : actor.kind === 'server' ? 'a server (x-api-key)' : actor.kind === 'system' ? 'the system' : 'an anonymous client';
  const by = actor.kind === 'impersonator' && actor.impersonatorId ? ` (${user(actor.impersonatorId)} impersonating)` : actor.kind === 'admin' ? ' (as admin)' : '';
  const from = input.ipAddress ? ` from ${input.ipAddress}` : '';
  const subject = user(data.userId);
  const org = `organization ${typeof data.organizationId === 'string' ? (organizations.get(data.organizationId) ?? data.organizationId) : text(data.organizationId)}`;
  const sentence = ((): string => {
    switch (input.type) {
      case 'user.registered.v1':
        return `${text(data.email)} signed up${from}`;
      case 'user.credential_account_created.v2':
        return `${subject} got a password${from}`;
      case 'user.provider_account_linked.v1':
        return `${subject} linked a ${text(data.providerId)} account${from}`;
      case 'user.provider_tokens_updated.v1':
        return `${subject}'s ${text(data.providerId)} tokens were renewed${from}`;
      case 'user.account_unlinked.v1':
        return `${who}${by} unlinked ${subject}'s ${text(data.providerId)} account${from}`;
      case 'user.updated.v1':
        return `${who}${by} updated the profile of ${subject}${from}`;
      case 'user.username_changed.v1':
        return `${subject}'s username became ${text(data.username)}${from}`;
      case 'user.email_verified.v1':
        return `${subject} verified ${text(data.email)}${from}`;
      case 'user.email_changed.v1':
        return `${subject}'s email changed from ${text(data.previousEmail)} to ${text(data.email)}${from}`;
      case 'user.password_changed.v1':
        return `${subject}'s password was changed (${text(data.via)})${from}`;
      case 'user.password_rehashed.v1': {
        const cost = (data.cost ?? {}) as Record<string, unknown>;
        const was = data.previous === 'better-auth-scrypt' ? 'better-auth scrypt' : 'argon2 at another cost';
        return `${subject}'s password hash was upgraded at sign-in, from ${was} to argon2id (m=${text(cost.memoryKiB)} KiB, t=${text(cost.iterations)}, p=${text(cost.parallelism)})${from}`;
      }
      case 'user.deleted.v1':
        return `${who}${by} deleted ${subject}${from}`;
      case 'user.role_changed.v1':
        return `${who}${by} made ${subject} ${text(data.role)}${from}`;
      case 'user.banned.v1':
        return `${who}${by} banned ${subject}${data.expiresAt ? ` until ${text(data.expiresAt)}` : ''} (${text(data.reason)})${from}`;
      case 'user.unbanned.v1':
        return data.reason === 'expired' ? `the ban of ${subject} expired` : `${who}${by} lifted the ban of ${subject}${from}`;
      case 'session.impersonation_started.v1':
        return `${who}${by} started impersonating ${subject}${from}`;
      case 'session.created.v2':
        return `${subject} signed in${data.providerId ? ` with ${text(data.providerId)}` : ''}${data.ipAddress ? ` from ${text(data.ipAddress)}` : from}`;
      case 'session.revoked.v1':
      case 'session.revoked.v2':
        return `a session of ${subject} ended (${text(data.reason).replaceAll('_', ' ')})${from}`;
      case 'credentials.sign_in_failed.v1':
        return `a sign-in as ${text(data.email)} failed (${text(data.reason).replaceAll('_', ' ')})${from}`;
      case 'credentials.username_sign_in_failed.v1':
        return `a sign-in as username ${text(data.username)} failed (${text(data.reason).replaceAll('_', ' ')})${from}`;
      case 'credentials.account_sign_in_failed.v1':
        return `a sign-in to the account of ${subject} failed (${text(data.reason).replaceAll('_', ' ')})${from}`;
      case 'credentials.sign_in_locked.v1':
        return `sign-ins as ${text(data.identifier)} were locked until ${text(data.lockedUntil)} after ${text(data.failures)} failures`;
      case 'credentials.account_sign_in_locked.v1':
        return `sign-ins to the account of ${subject} were locked until ${text(data.lockedUntil)} after ${text(data.failures)} failures`;
      case 'credentials.sign_in_unlocked.v1':
      case 'credentials.account_sign_in_unlocked.v1':
        return `a sign-in lock of ${subject} was lifted (${text(data.reason).replaceAll('_', ' ')})`;
      case 'perimeter.sign_in_rate_limited.v1':
        return `sign-ins${from} were rate-limited on ${text(data.route)} (${text(data.max)} per ${text(data.windowSeconds)} s)`;
      case 'perimeter.captcha_refused.v1':
        return `a request${from} to ${text(data.route)} was refused: captcha ${text(data.reason)}`;
      case 'organization.created.v1':
        return `${who}${by} created organization ${text(data.name)} (${text(data.slug)})${from}`;
      case 'organization.updated.v1':
        return `${who}${by} updated ${org}${from}`;
      case 'organization.deleted.v1':
        return `${who}${by} deleted ${org}${from}`;
      case 'organization.member_added.v1':
        return `${subject} joined ${org} as ${text(data.role)}${from}`;
      case 'organization.member_role_changed.v1':
        return `${who}${by} made ${subject} ${text(data.role)} in ${org}${from}`;
      case 'organization.member_removed.v1':
        return `${subject} left ${org} (${text(data.reason).replaceAll('_', ' ')})${from}`;
      case 'organization.invitation_created.v1':
        return `${user(data.inviterId)} invited ${text(data.email)} to ${org} as ${text(data.role)}${from}`;
      default: {
        // `organization.team_created.v1` → "organization: team created".
        const [area = input.type, fact = ''] = input.type.split('.');
        return `${who}${by}: ${area.replaceAll('_', ' ')} ${fact.replaceAll('_', ' ')}${from}`.trim();
      }
    }
  })();
  return sentence;
}

/** User ids a sentence may name, to look their labels up in one read. */
export function usersNamed(input: SentenceInput): string[] {
  const ids = [input.actor.id, input.actor.impersonatorId, input.data.userId, input.data.inviterId];
  return ids.filter((id): id is string => typeof id === 'string' && id !== '');
}

/** Keys of event data an audit reader is never shown: argon2 hashes (crackable offline), sealed tokens, a provider's tokens. */
export const REDACTED_KEYS: ReadonlySet<string> = new Set(['passwordHash', 'sealedToken', 'accessToken', 'refreshToken', 'idToken']);

export function redactedData(data: unknown): Record<string, unknown> {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return { value: data };
  return Object.fromEntries(Object.entries(data).map(([key, value]) => [key, REDACTED_KEYS.has(key) ? '[redacted]' : value]));
}
