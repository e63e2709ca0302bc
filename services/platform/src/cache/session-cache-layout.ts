/**
 * Where the Redis session cache keeps what. Everything the projection writes belongs to one generation of
 * one log: its keys carry the log's identity and the generation in a hash tag, `{sc:<log>:<generation>}`, so
 *
 * - a cache built from another log (another database, a fresh one) is simply never read: its keys differ;
 * - a rebuild writes a new generation beside the one being served and switches the pointer when it is
 *   complete, so no reader ever sees a half-replayed cache (a replay resurrects a session between its
 *   creation and its revocation);
 * - the keys of a generation share one Redis Cluster hash slot, so the script that applies a batch and
 *   moves its checkpoint touches one node. The price: one generation lives on one shard.
 *
 * The kind of key comes before the tag (`session:{sc:…}:<hash>`), so the api's in-process cache tracks all
 * session keys of every generation under one prefix.
 */
export interface SessionCacheLayout {
  /** The log this layout's keys belong to (`event_log_identity.id`). */
  readonly logId: string;
  /** The pointer to the generation readers use: a JSON `SessionCachePointer`. Never expires. */
  readonly pointerKey: string;
  /** Pub/sub channel: each move of a Redis projection's checkpoint (`checkpointNotice`). */
  readonly checkpointChannel: string;
  /** The prefix of every session key, of every generation: what the api's in-process cache tracks. */
  readonly sessionKeyPrefix: string;
  /**
   * The api processes holding session answers in process, and how far each has heard the cache's
   * invalidations: a revocation answers once every one of them is past it (see `HeldReaders`). One hash tag.
   */
  readonly heldReaders: { readonly members: string; readonly positions: string };
  generation(generation: string): SessionCacheKeys;
  /** A glob matching every key of every generation of this log's cache: what a sweep for abandoned ones scans. */
  readonly everyGeneration: string;
  /** The generation a key of this log's cache belongs to, or null for any other key. */
  generationOf(key: string): string | null;
}

export interface SessionCacheKeys {
  readonly generation: string;
  /** `{session, user}` as get-session answers it, by the token's SHA-256; expires with the session. */
  session(tokenHash: string): string;
  /** The session's token hash, by session id: for events written before revocations named the hash. */
  sessionToken(sessionId: string): string;
  user(userId: string): string;
  userSessions(userId: string): string;
  /** Token hashes of the cached sessions whose active organization (or team) this is: who to clear when it goes. */
  organizationSessions(organizationId: string): string;
  teamSessions(teamId: string): string;
  /** `<position>:<eventId>` of the last event applied (`0` before any): names the history it was built from. */
  readonly checkpoint: string;
  /** A glob matching every session key of this generation. */
  readonly allSessions: string;
  /** A glob matching every key of this generation, for deleting it. */
  readonly all: string;
}

/** Which generation readers use, and which one a replay is building (if any). */
export interface SessionCachePointer {
  readonly current: string | null;
  readonly building: string | null;
}

export function sessionCacheLayout(prefix: string, logId: string): SessionCacheLayout {
  // Twelve hex digits of the log's uuid tell logs apart in key names without making every key 36 bytes longer.
  const log = logId.replaceAll('-', '').slice(0, 12);
  return {
    logId,
    pointerKey: `${prefix}session-cache:${log}`,
    checkpointChannel: `${prefix}checkpoints`,
    sessionKeyPrefix: `${prefix}session:`,
    heldReaders: { members: `${prefix}held-readers:{hr:${log}}`, positions: `${prefix}held-positions:{hr:${log}}` },
    everyGeneration: `${globEscape(prefix)}*${globEscape(`{sc:${log}:`)}*`,
    generationOf(key) {
      const opening = `{sc:${log}:`;
      const at = key.indexOf(opening);
      if (!key.startsWith(prefix) || at < 0) return null;
      const end = key.indexOf('}', at);
      return end < 0 ? null : key.slice(at + opening.length, end);
    },
    generation(generation) {
      const tag = `{sc:${log}:${generation}}`;
      return {
        generation,
        session: (tokenHash) => `${prefix}session:${tag}:${tokenHash}`,
        sessionToken: (sessionId) => `${prefix}session-token:${tag}:${sessionId}`,
        user: (userId) => `${prefix}user:${tag}:${userId}`,
        userSessions: (userId) => `${prefix}user-sessions:${tag}:${userId}`,
        organizationSessions: (organizationId) => `${prefix}organization-sessions:${tag}:${organizationId}`,
        teamSessions: (teamId) => `${prefix}team-sessions:${tag}:${teamId}`,
        checkpoint: `${prefix}checkpoint:${tag}`,
        allSessions: `${globEscape(`${prefix}session:${tag}:`)}*`,
        all: `${globEscape(prefix)}*${globEscape(tag)}*`,
      };
    },
  };
}

export function parsePointer(raw: string | null): SessionCachePointer {
  if (raw === null) return { current: null, building: null };
  try {
    const parsed = JSON.parse(raw) as Partial<SessionCachePointer>;
    return { current: parsed.current ?? null, building: parsed.building ?? null };
  } catch {
    return { current: null, building: null };
  }
}

/** A checkpoint as the session cache stores it: the position and the id of the event there. */
export interface CacheCheckpoint {
  readonly position: number;
  readonly eventId: string | null;
}

export function formatCacheCheckpoint(position: number, eventId: string | null): string {
  return position === 0 || eventId === null ? String(position) : `${position}:${eventId}`;
}

export function parseCacheCheckpoint(raw: string | null): CacheCheckpoint | null {
  if (raw === null) return null;
  const [position, eventId] = raw.split(':', 2);
  const parsed = Number(position);
  return Number.isSafeInteger(parsed) && parsed >= 0 ? { position: parsed, eventId: eventId ?? null } : null;
}

/** A new generation's name: unique per replay, and sorting by age (base-36 milliseconds, then randomness). */
export function newGenerationName(now = Date.now()): string {
  return `${now.toString(36)}${Math.floor(Math.random() * 36 ** 4).toString(36).padStart(4, '0')}`;
}

function globEscape(text: string): string {
  return text.replace(/[*?[\]\\{}]/g, '\\$&');
}
