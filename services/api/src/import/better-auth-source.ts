import { createDatabasePool, sql, type DatabasePool } from '@portcullis/platform';

/**
 * A better-auth 1.x database as its own migrations (`auth migrate`, Kysely on Postgres) lay it out: camelCase
 * columns in double quotes, tables `user`, `session`, `account`, `verification`, and with the organization
 * plugin `organization`, `member`, `invitation`, `team`, `teamMember`. The username plugin adds
 * `user.username` and `displayUsername`; the admin plugin `user.role`, `banned`, `banReason`, `banExpires`
 * and `session.impersonatedBy`; the organization plugin `session.activeOrganizationId` (and, with teams,
 * `activeTeamId`). A plugin the app did not run leaves its columns and tables out: read as absent.
 */

export interface SourceUser {
  readonly id: string;
  readonly name: string;
  readonly email: string;
  readonly emailVerified: boolean;
  readonly image: string | null;
  readonly username: string | null;
  readonly displayUsername: string | null;
  readonly role: string | null;
  readonly banned: boolean;
  readonly banReason: string | null;
  readonly banExpires: Date | null;
}

export interface SourceAccount {
  readonly id: string;
  readonly userId: string;
  readonly providerId: string;
  readonly accountId: string;
  readonly password: string | null;
  readonly accessToken: string | null;
  readonly refreshToken: string | null;
  readonly idToken: string | null;
  readonly accessTokenExpiresAt: Date | null;
  readonly refreshTokenExpiresAt: Date | null;
  readonly scope: string | null;
}

export interface SourceSession {
  readonly id: string;
  readonly userId: string;
  readonly token: string;
  readonly expiresAt: Date;
  readonly ipAddress: string | null;
  readonly userAgent: string | null;
  readonly impersonatedBy: string | null;
  readonly activeOrganizationId: string | null;
  readonly activeTeamId: string | null;
}

export interface SourceOrganization {
  readonly id: string;
  readonly name: string;
  readonly slug: string;
  readonly logo: string | null;
  readonly metadata: string | null;
}

export interface SourceMember {
  readonly id: string;
  readonly organizationId: string;
  readonly userId: string;
  readonly role: string;
}

export interface SourceInvitation {
  readonly id: string;
  readonly organizationId: string;
  readonly email: string;
  readonly role: string | null;
  readonly teamId: string | null;
  readonly status: string;
  readonly expiresAt: Date;
  readonly inviterId: string;
}

export interface SourceTeam {
  readonly id: string;
  readonly organizationId: string;
  readonly name: string;
}

export interface SourceTeamMember {
  readonly id: string;
  readonly teamId: string;
  readonly userId: string;
}

export interface SourceOrganizationRows {
  readonly members: readonly SourceMember[];
  readonly teams: readonly SourceTeam[];
  readonly teamMembers: readonly SourceTeamMember[];
  readonly invitations: readonly SourceInvitation[];
}

export interface SourceVerification {
  readonly expiresAt: Date;
}

/** The columns without which a table cannot be read at all; the rest are read when present. */
const requiredColumns: Readonly<Record<string, readonly string[]>> = {
  user: ['id', 'name', 'email', 'emailVerified', 'image'],
  session: ['id', 'userId', 'token', 'expiresAt'],
  account: ['id', 'userId', 'providerId', 'accountId'],
  verification: ['id', 'identifier', 'expiresAt'],
  organization: ['id', 'name', 'slug'],
  member: ['id', 'organizationId', 'userId', 'role'],
  invitation: ['id', 'organizationId', 'email', 'status', 'expiresAt', 'inviterId'],
  team: ['id', 'organizationId', 'name'],
  teamMember: ['id', 'teamId', 'userId'],
};
const coreTables = ['user', 'session', 'account', 'verification'];

/** What a source database is not: the reasons it cannot be read as better-auth's, or none. */
export class SourceSchemaError extends Error {}

type Row = Record<string, unknown>;

/** A text column's value; anything else (a column of an unexpected type) as its JSON. */
const text = (value: unknown): string | null => (typeof value === 'string' ? value : value === null || value === undefined ? null : JSON.stringify(value));
const time = (value: unknown): Date | null => (value === null || value === undefined ? null : new Date(value as string | number));

export class BetterAuthSource {
  private constructor(
    private readonly pool: DatabasePool,
    /** Table → its columns, for the tables there are. */
    private readonly columns: ReadonlyMap<string, ReadonlySet<string>>,
  ) {}

  /** Connects, and refuses a database that lacks better-auth's core tables or a column they cannot do without. */
  static async open(databaseUrl: string): Promise<BetterAuthSource> {
    const pool = await createDatabasePool(databaseUrl, { maximumPoolSize: 2 });
    try {
      const rows = await pool.any(
        sql.unsafe`select table_name, column_name from information_schema.columns where table_schema = current_schema() and table_name = any(${sql.array(Object.keys(requiredColumns), 'text')})`,
      );
      const columns = new Map<string, Set<string>>();
      for (const row of rows as Array<{ table_name: string; column_name: string }>) {
        let set = columns.get(row.table_name);
        if (!set) columns.set(row.table_name, (set = new Set()));
        set.add(row.column_name);
      }
      // Portcullis' read models have better-auth's shape; its log is what tells it apart.
      const portcullis = await pool.maybeOneFirst(sql.unsafe`select to_regclass('event_log_identity') is not null`);
      if (portcullis === true) throw new SourceSchemaError('a Portcullis database (it has an event log), not a better-auth one');
      const problems: string[] = [];
      for (const table of coreTables) if (!columns.has(table)) problems.push(`table "${table}" is missing`);
      for (const [table, required] of Object.entries(requiredColumns)) {
        const present = columns.get(table);
        if (!present) continue;
        const missing = required.filter((column) => !present.has(column));
        if (missing.length > 0) problems.push(`table "${table}" lacks ${missing.map((c) => `"${c}"`).join(', ')}`);
      }
      if (problems.length > 0) throw new SourceSchemaError(`not a better-auth 1.x database: ${problems.join('; ')}`);
      return new BetterAuthSource(pool, columns);
    } catch (error) {
      await pool.end();
      throw error;
    }
  }

  /** Whether the organization plugin's tables are there (teams: also `team` and `teamMember`). */
  get hasOrganizations(): boolean {
    return this.columns.has('organization') && this.columns.has('member');
  }

  private has(table: string, column: string): boolean {
    return this.columns.get(table)?.has(column) ?? false;
  }

  /** `"column"`, or null as "column" when the table lacks it (a plugin the app did not run). */
  private select(table: string, columns: readonly string[]): ReturnType<typeof sql.join> {
    const parts = columns.map((column) => (this.has(table, column) ? sql.identifier([column]) : sql.fragment`null as ${sql.identifier([column])}`));
    return sql.join(parts, sql.fragment`, `);
  }

  async count(table: string): Promise<number> {
    if (!this.columns.has(table)) return 0;
    return Number(await this.pool.oneFirst(sql.unsafe`select count(*) from ${sql.identifier([table])}`));
  }

  /** Rows of `table` after `afterId`, by id: a page of a walk that a rerun can take up anywhere. */
  private async page(table: string, columns: readonly string[], afterId: string | null, limit: number): Promise<Row[]> {
    const after = afterId === null ? sql.fragment`true` : sql.fragment`id > ${afterId}`;
    const rows = await this.pool.any(
      sql.unsafe`select ${this.select(table, columns)} from ${sql.identifier([table])} where ${after} order by id collate "C" limit ${limit}`,
    );
    return rows as Row[];
  }

  async users(afterId: string | null, limit: number): Promise<SourceUser[]> {
    const rows = await this.page(
      'user',
      ['id', 'name', 'email', 'emailVerified', 'image', 'username', 'displayUsername', 'role', 'banned', 'banReason', 'banExpires'],
      afterId,
      limit,
    );
    return rows.map((r) => ({
      id: String(r.id),
      name: text(r.name) ?? '',
      email: text(r.email) ?? '',
      emailVerified: r.emailVerified === true,
      image: text(r.image),
      username: text(r.username),
      displayUsername: text(r.displayUsername),
      role: text(r.role),
      banned: r.banned === true,
      banReason: text(r.banReason),
      banExpires: time(r.banExpires),
    }));
  }

  async accountsOf(userIds: readonly string[]): Promise<SourceAccount[]> {
    if (userIds.length === 0) return [];
    const columns = ['id', 'userId', 'providerId', 'accountId', 'password', 'accessToken', 'refreshToken', 'idToken', 'accessTokenExpiresAt', 'refreshTokenExpiresAt', 'scope'];
    const rows = (await this.pool.any(
      sql.unsafe`select ${this.select('account', columns)} from account where "userId" = any(${sql.array([...userIds], 'text')}) order by id collate "C"`,
    )) as Row[];
    return rows.map((r) => ({
      id: String(r.id),
      userId: String(r.userId),
      providerId: String(r.providerId),
      accountId: String(r.accountId),
      password: text(r.password),
      accessToken: text(r.accessToken),
      refreshToken: text(r.refreshToken),
      idToken: text(r.idToken),
      accessTokenExpiresAt: time(r.accessTokenExpiresAt),
      refreshTokenExpiresAt: time(r.refreshTokenExpiresAt),
      scope: text(r.scope),
    }));
  }

  async sessions(afterId: string | null, limit: number): Promise<SourceSession[]> {
    const rows = await this.page('session', ['id', 'userId', 'token', 'expiresAt', 'ipAddress', 'userAgent', 'impersonatedBy', 'activeOrganizationId', 'activeTeamId'], afterId, limit);
    return rows.map((r) => ({
      id: String(r.id),
      userId: String(r.userId),
      token: String(r.token),
      expiresAt: time(r.expiresAt)!,
      // better-auth stores an unknown address or agent as the empty string.
      ipAddress: text(r.ipAddress) || null,
      userAgent: text(r.userAgent) || null,
      impersonatedBy: text(r.impersonatedBy),
      activeOrganizationId: text(r.activeOrganizationId),
      activeTeamId: text(r.activeTeamId),
    }));
  }

  async organizations(afterId: string | null, limit: number): Promise<SourceOrganization[]> {
    if (!this.hasOrganizations) return [];
    const rows = await this.page('organization', ['id', 'name', 'slug', 'logo', 'metadata'], afterId, limit);
    return rows.map((r) => ({ id: String(r.id), name: text(r.name) ?? '', slug: text(r.slug) ?? '', logo: text(r.logo), metadata: text(r.metadata) }));
  }

  /** Everything of one organization: members oldest first (the first owner among them stands as its creator). */
  async organizationRows(organizationId: string): Promise<SourceOrganizationRows> {
    const order = (table: string) => (this.has(table, 'createdAt') ? sql.fragment`"createdAt", id collate "C"` : sql.fragment`id collate "C"`);
    const members = (await this.pool.any(
      sql.unsafe`select id, "userId", role from member where "organizationId" = ${organizationId} order by ${order('member')}`,
    )) as Row[];
    const teams = this.columns.has('team')
      ? ((await this.pool.any(sql.unsafe`select id, name from team where "organizationId" = ${organizationId} order by ${order('team')}`)) as Row[])
      : [];
    const teamMembers = this.columns.has('teamMember')
      ? ((await this.pool.any(
          sql.unsafe`select tm.id, tm."teamId", tm."userId" from "teamMember" tm join team t on t.id = tm."teamId" where t."organizationId" = ${organizationId} order by tm.id collate "C"`,
        )) as Row[])
      : [];
    const invitations = this.columns.has('invitation')
      ? ((await this.pool.any(
          sql.unsafe`select ${this.select('invitation', ['id', 'email', 'role', 'teamId', 'status', 'expiresAt', 'inviterId'])} from invitation where "organizationId" = ${organizationId} order by id collate "C"`,
        )) as Row[])
      : [];
    return {
      members: members.map((r) => ({ id: String(r.id), organizationId, userId: String(r.userId), role: text(r.role) ?? '' })),
      teams: teams.map((r) => ({ id: String(r.id), organizationId, name: text(r.name) ?? '' })),
      teamMembers: teamMembers.map((r) => ({ id: String(r.id), teamId: String(r.teamId), userId: String(r.userId) })),
      invitations: invitations.map((r) => ({
        id: String(r.id),
        organizationId,
        email: text(r.email) ?? '',
        role: text(r.role),
        teamId: text(r.teamId),
        status: text(r.status) ?? 'pending',
        expiresAt: time(r.expiresAt)!,
        inviterId: String(r.inviterId),
      })),
    };
  }

  async verifications(afterId: string | null, limit: number): Promise<Array<SourceVerification & { id: string }>> {
    const rows = await this.page('verification', ['id', 'expiresAt'], afterId, limit);
    return rows.map((r) => ({ id: String(r.id), expiresAt: time(r.expiresAt)! }));
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}
