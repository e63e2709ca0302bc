import { organizationNamingTypes, streams, type AuditNames, type AuditOrganizationLabel, type AuditPerson } from '@portcullis/contracts';
import { sql, type CommonQueryMethods, type EventStore, type PersonalData } from '@portcullis/platform';

/** Fields of event data (and of folded states) that name a user, beside an event's actor. */
const USER_FIELDS: ReadonlySet<string> = new Set(['userId', 'inviterId', 'createdByUserId', 'byUserId', 'impersonatorId']);
const ORGANIZATION_FIELDS: ReadonlySet<string> = new Set(['organizationId']);
/** Fields that list users (an organization's deletion names who was still a member). */
const USER_LIST_FIELDS: ReadonlySet<string> = new Set(['memberUserIds']);

/** The user and organization ids an answer mentions, gathered before their names are read in one go. */
export class MentionedIds {
  readonly users = new Set<string>();
  readonly organizations = new Set<string>();

  user(id: unknown): this {
    if (typeof id === 'string' && id !== '') this.users.add(id);
    return this;
  }

  organization(id: unknown): this {
    if (typeof id === 'string' && id !== '') this.organizations.add(id);
    return this;
  }

  /** Every id a value holds under a field that names a user or an organization, however deep (event data, a folded state). */
  within(value: unknown, depth = 0): this {
    if (depth > 8 || value === null || typeof value !== 'object') return this;
    if (Array.isArray(value)) {
      for (const item of value) this.within(item, depth + 1);
      return this;
    }
    for (const [key, field] of Object.entries(value)) {
      if (USER_FIELDS.has(key)) this.user(field);
      else if (USER_LIST_FIELDS.has(key) && Array.isArray(field)) for (const id of field) this.user(id);
      else if (ORGANIZATION_FIELDS.has(key)) this.organization(field);
      else this.within(field, depth + 1);
    }
    return this;
  }
}

/**
 * The names of the users and organizations mentioned: a user's name and email as the user table has them
 * now, or `erased` once their key is gone (their deletion destroyed what named them, so nothing here may);
 * an organization's name and slug, or, deleted, its last ones as its stream says. An id that names neither
 * is left out.
 */
export async function namesOf(
  reads: { readonly db: CommonQueryMethods; readonly store: Pick<EventStore, 'readStreams'>; readonly personalData: PersonalData },
  mentioned: MentionedIds,
): Promise<AuditNames> {
  const [people, organizations] = await Promise.all([
    peopleNamed(reads.db, reads.personalData, [...mentioned.users]),
    organizationsNamed(reads.db, reads.store, [...mentioned.organizations]),
  ]);
  return { people, organizations };
}

async function peopleNamed(db: CommonQueryMethods, personalData: PersonalData, ids: readonly string[]): Promise<Record<string, AuditPerson>> {
  const people: Record<string, AuditPerson> = {};
  if (ids.length === 0) return people;
  const keyIds = ids.map((id) => personalData.cipher.subjectId({ user: id }));
  // A key row without a key is an erased user's: kept so no later append can give them a fresh one.
  const rows = (await db.any(sql.unsafe`
    SELECT given.id, u.name, u.email, k.subject_id IS NOT NULL AS erased
    FROM unnest(${sql.array([...ids], 'text')}::text[], ${sql.array(keyIds, 'text')}::text[]) AS given(id, key_id)
    LEFT JOIN "user" u ON u.id = given.id
    LEFT JOIN data_key k ON k.subject_id = given.key_id AND k.wrapped_key IS NULL`)) as readonly {
    id: string;
    name: string | null;
    email: string | null;
    erased: boolean;
  }[];
  for (const row of rows) {
    if (row.erased) people[row.id] = 'erased';
    else if (row.email !== null) people[row.id] = { name: row.name ?? '', email: row.email };
  }
  return people;
}

async function organizationsNamed(db: CommonQueryMethods, store: Pick<EventStore, 'readStreams'>, ids: readonly string[]): Promise<Record<string, AuditOrganizationLabel>> {
  const organizations: Record<string, AuditOrganizationLabel> = {};
  if (ids.length === 0) return organizations;
  const rows = (await db.any(sql.unsafe`
    SELECT id, name, slug FROM organization WHERE id = ANY(${sql.array([...ids], 'text')})`)) as readonly { id: string; name: string; slug: string }[];
  for (const row of rows) organizations[row.id] = { name: row.name, slug: row.slug, deleted: false };
  const gone = ids.filter((id) => !(id in organizations));
  if (gone.length === 0) return organizations;
  // A deleted organization has no row: its last name and slug are those its creation and updates left.
  const reads = await store.readStreams(gone.map((id) => streams.organization(id)));
  const events = [...reads.values()].flatMap((read) => read.events.filter((event) => organizationNamingTypes.has(event.type))) as ReadonlyArray<{
    type: string;
    data: { organizationId?: string; name?: string; slug?: string };
  }>;
  for (const { type, data } of events) {
    if (typeof data.organizationId !== 'string') continue;
    const was = organizations[data.organizationId] ?? { name: '', slug: '', deleted: false };
    organizations[data.organizationId] = {
      name: data.name ?? was.name,
      slug: data.slug ?? was.slug,
      deleted: was.deleted || type === 'organization.deleted.v1',
    };
  }
  return organizations;
}
