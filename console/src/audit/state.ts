// A folded state (what time travel answers) as rows an operator reads: one row per leaf, paths spelled the
// way the api's diffs spell them (`organizations.org-1.role`), so a row and its change line up.

export interface StateRow {
  readonly path: string;
  readonly value: unknown;
}

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Every leaf of a state, objects walked key by key in order; arrays and empty objects are leaves. */
export function flattenState(state: unknown, path = ''): StateRow[] {
  if (isRecord(state) && Object.keys(state).length > 0) {
    return Object.keys(state)
      .sort()
      .flatMap((key) => flattenState(state[key], path ? `${path}.${key}` : key));
  }
  return [{ path: path || '.', value: state }];
}

/** Whether a state row lies under (or is) a changed path: `account.ban` marks `account.ban.expiresAt`. */
export function isUnder(path: string, changedPaths: ReadonlySet<string>): boolean {
  if (changedPaths.has(path)) return true;
  for (const changed of changedPaths) if (path.startsWith(`${changed}.`) || changed.startsWith(`${path}.`)) return true;
  return false;
}

export interface UserSummary {
  readonly exists: boolean;
  readonly name: string | null;
  readonly email: string | null;
  readonly role: string | null;
  /** null: not a registered user at that point. */
  readonly banned: boolean | null;
  readonly sessions: number;
  readonly organizations: ReadonlyArray<{ readonly id: string; readonly name: string | null; readonly role: string | null }>;
}

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** The few facts of a user's time-travel state an operator looks for first. */
export function userSummary(state: unknown): UserSummary {
  const root = isRecord(state) ? state : {};
  const profile = isRecord(root.profile) ? root.profile : {};
  const sessions = isRecord(root.sessions) ? Object.keys(root.sessions).length : 0;
  const organizations = isRecord(root.organizations)
    ? Object.entries(root.organizations).map(([id, membership]) => ({
        id,
        name: isRecord(membership) ? text(membership.name) : null,
        role: isRecord(membership) ? text(membership.role) : null,
      }))
    : [];
  return {
    exists: profile.status === 'registered',
    name: text(profile.name),
    email: text(profile.email),
    role: text(root.role),
    banned: typeof root.banned === 'boolean' ? root.banned : null,
    sessions,
    organizations,
  };
}
