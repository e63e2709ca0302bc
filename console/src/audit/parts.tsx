import type { AuditChange, AuditEvent, AuditNames } from '@portcullis/contracts/api/audit';
import { useState, type KeyboardEvent, type ReactNode } from 'react';
import { Link } from '../router.tsx';
import { Badge, Button, OrganizationRef, UserRef } from '../ui/components.tsx';
import { formatValue } from '../ui/format.ts';

// Pieces the audit pages share: who a user id names, who acted, which subjects an event concerns, and a
// table of changes with before and after.

/** A user id as the answer's names map names it: name and email, "erased" after deletion, else the id. */
export function PersonRef({ id, people }: { readonly id: string | null | undefined; readonly people: AuditNames['people'] }) {
  if (!id) return <span className="muted">—</span>;
  const person = people[id];
  if (person === 'erased') {
    return (
      <span className="ref" title={id}>
        <span className="ref-name">erased user</span>
        <span className="ref-detail mono">{id}</span>
      </span>
    );
  }
  return <UserRef id={id} name={person?.name ?? null} email={person?.email ?? null} />;
}

export function OrganizationName({ id, organizations }: { readonly id: string; readonly organizations: AuditNames['organizations'] }) {
  const label = organizations[id];
  return (
    <span className="audit-org">
      <OrganizationRef id={id} name={label?.name ?? null} slug={label?.slug ?? null} />
      {label?.deleted ? <Badge tone="warn">deleted</Badge> : null}
    </span>
  );
}

const kindWords: Record<AuditEvent['actor']['kind'], string> = {
  user: 'user',
  admin: 'admin',
  impersonator: 'impersonating',
  server: 'server (x-api-key)',
  system: 'the system',
  anonymous: 'anonymous',
};

/** Who did it: the acting user by name (and the admin behind an impersonation), or what kind of caller. */
export function ActorRef({ actor, people }: { readonly actor: AuditEvent['actor']; readonly people: AuditNames['people'] }) {
  if (actor.kind === 'impersonator' && actor.impersonatorId) {
    return (
      <span className="audit-actor">
        <PersonRef id={actor.impersonatorId} people={people} />
        <span className="muted"> as </span>
        <PersonRef id={actor.id} people={people} />
      </span>
    );
  }
  if (actor.id) {
    return (
      <span className="audit-actor">
        <PersonRef id={actor.id} people={people} />
        {actor.kind === 'admin' ? <Badge tone="info">admin</Badge> : null}
      </span>
    );
  }
  return <span className="muted">{kindWords[actor.kind]}</span>;
}

/** The users and organizations an event's data names (its subject, an inviter). */
export function subjectIdsOf(data: Record<string, unknown>): { users: string[]; organizations: string[] } {
  const users = ['userId', 'inviterId'].map((key) => data[key]).filter((id): id is string => typeof id === 'string' && id !== '');
  const organizations = typeof data.organizationId === 'string' && data.organizationId !== '' ? [data.organizationId] : [];
  return { users: [...new Set(users)], organizations };
}

export function SubjectRefs({ data, names }: { readonly data: Record<string, unknown>; readonly names: AuditNames }) {
  const { users, organizations } = subjectIdsOf(data);
  if (users.length === 0 && organizations.length === 0) return <span className="muted">—</span>;
  return (
    <span className="audit-subjects">
      {users.map((id) => (
        <PersonRef key={id} id={id} people={names.people} />
      ))}
      {organizations.map((id) => (
        <OrganizationName key={id} id={id} organizations={names.organizations} />
      ))}
    </span>
  );
}

/** A value of event data or state: a redacted secret says so instead of showing the placeholder as data. */
export function ShownValue({ value }: { readonly value: unknown }) {
  if (value === '[redacted]') return <Badge tone="neutral">redacted</Badge>;
  if (value === undefined) return <span className="muted">(absent)</span>;
  const text = formatValue(value);
  return <code className="audit-value">{text}</code>;
}

/** Changes, path by path, before and after, the changed sides marked. */
export function ChangesTable({ changes, caption, beforeLabel = 'Before', afterLabel = 'After' }: { readonly changes: readonly AuditChange[]; readonly caption: string; readonly beforeLabel?: string; readonly afterLabel?: string }) {
  if (changes.length === 0) return <p className="muted">No change.</p>;
  return (
    <table className="data-table audit-changes">
      <caption className="visually-hidden">{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Path</th>
          <th scope="col">{beforeLabel}</th>
          <th scope="col">{afterLabel}</th>
        </tr>
      </thead>
      <tbody>
        {changes.map((change) => (
          <tr key={change.path} className="audit-changed">
            <th scope="row" className="mono">
              {change.path}
            </th>
            <td className="diff-before">
              <ShownValue value={change.before} />
            </td>
            <td className="diff-after">
              <ShownValue value={change.after} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * A filter of several values: typed comma-separated (or pasted from a log), each value a chip that can be
 * removed. Enter or leaving the field adds what was typed; values the filter cannot take are refused in place.
 */
export function ValuesField({
  label,
  values,
  onChange,
  accepts,
  refusal = 'not a value this filter takes',
  chip,
  placeholder,
  list,
}: {
  readonly label: string;
  readonly values: readonly string[];
  readonly onChange: (values: string[]) => void;
  readonly accepts?: (value: string) => boolean;
  readonly refusal?: string;
  readonly chip?: (value: string) => ReactNode;
  readonly placeholder?: string;
  readonly list?: string;
}) {
  const [text, setText] = useState('');
  const [refused, setRefused] = useState<string[]>([]);
  const commit = () => {
    const typed = text.split(',').map((part) => part.trim()).filter((part) => part !== '');
    if (typed.length === 0) return;
    const bad = accepts ? typed.filter((value) => !accepts(value)) : [];
    const good = typed.filter((value) => !bad.includes(value) && !values.includes(value));
    setRefused(bad);
    setText(bad.join(', '));
    if (good.length > 0) onChange([...values, ...good]);
  };
  const onKey = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key === 'Enter') {
      event.preventDefault();
      commit();
    }
  };
  return (
    <div className="field audit-values">
      <label className="field">
        <span className="field-label">{label}</span>
        <input value={text} onChange={(event) => setText(event.target.value)} onKeyDown={onKey} onBlur={commit} placeholder={placeholder} list={list} spellCheck={false} />
      </label>
      {refused.length > 0 ? (
        <span className="field-hint tone-bad" role="alert">
          {refused.join(', ')}: {refusal}
        </span>
      ) : null}
      {values.length > 0 ? (
        <ul className="chips" aria-label={`${label} filter`}>
          {values.map((value) => (
            <li key={value} className="chip">
              <span>{chip ? chip(value) : value}</span>
              <Button aria-label={`Remove ${label.toLowerCase()} ${value}`} className="chip-remove" onClick={() => onChange(values.filter((v) => v !== value))}>
                ×
              </Button>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

/** Keys of event data that hold a user's id (shown by name) or an organization's. */
const userKeys = new Set(['userId', 'inviterId', 'actorId', 'impersonatorId', 'adminId']);

/** An event's data, key by key: users and organizations by name, nested values as JSON, secrets as "redacted". */
export function EventData({ data, names }: { readonly data: Record<string, unknown>; readonly names: AuditNames }) {
  const entries = Object.entries(data);
  if (entries.length === 0) return <p className="muted">No data.</p>;
  const shown = (key: string, value: unknown) => {
    if (typeof value === 'string' && userKeys.has(key)) return <PersonRef id={value} people={names.people} />;
    if (typeof value === 'string' && key === 'organizationId') return <OrganizationName id={value} organizations={names.organizations} />;
    return <ShownValue value={value} />;
  };
  return (
    <dl className="key-values">
      {entries.map(([key, value]) => (
        <div key={key}>
          <dt>{key}</dt>
          <dd>{shown(key, value)}</dd>
        </div>
      ))}
    </dl>
  );
}

/** Where an event's links go: its detail, the view of its address, of its type. */
export const auditPaths = {
  event: (position: number) => `/audit/events/${position}`,
  filtered: (filter: Record<string, string>) => `/audit?${new URLSearchParams(filter).toString()}`,
  timeTravel: (kind: 'user' | 'organization', id: string, at?: number) =>
    `/audit/time-travel?${new URLSearchParams({ kind, id, ...(at !== undefined ? { at: String(at) } : {}) }).toString()}`,
};

export function AddressLink({ address }: { readonly address: string | null | undefined }) {
  if (!address) return <span className="muted">—</span>;
  return (
    <Link to={auditPaths.filtered({ ip: address })} className="mono" title={`Every event from ${address}`}>
      {address}
    </Link>
  );
}
