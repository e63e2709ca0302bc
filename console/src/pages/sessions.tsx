import { adminEndpoints } from '@portcullis/contracts/api/admin';
import { consoleOpsEndpoints } from '@portcullis/contracts/api/console-ops';
import type { User } from '@portcullis/contracts/api/user';
import { useState, type FormEvent } from 'react';
import { useRead, useWrite } from '../api/hooks.ts';
import { useSearchState } from '../router.tsx';
import { Button, ErrorNotice, Field, Page, UserRef } from '../ui/components.tsx';
import { DataTable } from '../ui/data-table.tsx';
import { formatCount } from '../ui/format.ts';
import { sessionColumns } from './session-columns.tsx';
import { applyDraft, draftOf, sessionsQueryOf, sessionsView, type DraftProblems, type SessionsFilterDraft, type SessionsView } from './sessions-view.ts';

/** Live: a session opened or ended elsewhere shows within this. */
const REFRESH_MS = 10_000;

export default function SessionsPage() {
  const [view, setView] = useSearchState(sessionsView);
  const sessions = useRead(consoleOpsEndpoints.opsSessions, { query: sessionsQueryOf(view) }, { refetchInterval: REFRESH_MS });
  const revoke = useWrite(adminEndpoints.revokeUserSession);
  const columns = sessionColumns({
    withUser: true,
    busy: revoke.isPending,
    onRevoke: (session) => revoke.mutate({ body: { sessionToken: session.tokenHash } }),
    onOnlyUser: (userId) => setView({ user: [userId], offset: 0 }),
  });
  return (
    <Page title="Sessions" actions={<span className="muted">{sessions.data ? `${formatCount(sessions.data.total)} live` : null}</span>}>
      <SessionsFilters view={view} onApply={(patch) => setView(patch)} />
      <div className="chosen-row">
        <ChosenUsers view={view} onRemove={(id) => setView({ user: view.user.filter((other) => other !== id), offset: 0 })} />
        <AddUser chosen={view.user} onAdd={(id) => setView({ user: [...view.user, id], offset: 0 })} />
      </div>
      {revoke.isSuccess ? (
        <div className="notice tone-ok" role="status">
          Session revoked.
        </div>
      ) : null}
      <ErrorNotice error={revoke.error ?? sessions.error} />
      <DataTable
        caption="Live sessions"
        columns={columns}
        rows={sessions.data?.sessions ?? []}
        total={sessions.data?.total ?? 0}
        rowId={(session) => session.id}
        page={{ offset: view.offset, limit: view.limit }}
        onPage={(page) => setView(page)}
        sort={{ sortBy: view.sortBy, sortDirection: view.sortDirection }}
        onSort={(sort) => setView({ sortBy: (sort.sortBy ?? 'createdAt') as SessionsView['sortBy'], sortDirection: sort.sortDirection ?? 'desc', offset: 0 })}
        busy={sessions.isFetching}
      />
    </Page>
  );
}

/** The filters as typed; applied together (Enter or the button), each typo named beside its field. */
export function SessionsFilters({ view, onApply }: { readonly view: SessionsView; readonly onApply: (patch: Partial<SessionsView>) => void }) {
  const [draft, setDraft] = useState<SessionsFilterDraft>(() => draftOf(view));
  const [problems, setProblems] = useState<DraftProblems>({});
  // A link followed, Back pressed or a user added elsewhere shows that view's filters, not stale typing;
  // the form stays mounted, so the field typed in keeps its focus after Enter.
  const viewFilters = JSON.stringify(draftOf(view));
  const [shownFilters, setShownFilters] = useState(viewFilters);
  if (shownFilters !== viewFilters) {
    setShownFilters(viewFilters);
    setDraft(draftOf(view));
    setProblems({});
  }
  const edit = (patch: Partial<SessionsFilterDraft>) => setDraft((current) => ({ ...current, ...patch }));
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const applied = applyDraft(draft);
    if ('problems' in applied) {
      setProblems(applied.problems);
      return;
    }
    setProblems({});
    onApply(applied.patch);
  };
  const clear = () => {
    setProblems({});
    onApply({ user: [], ip: '', olderThan: '', newerThan: '', impersonated: undefined, offset: 0 });
  };
  return (
    <form className="filters" role="search" aria-label="Session filters" onSubmit={submit} noValidate>
      <Field label="User ids" hint={problems.users ?? 'several: commas or spaces'}>
        <input value={draft.users} onChange={(event) => edit({ users: event.target.value })} spellCheck={false} aria-invalid={problems.users ? true : undefined} size={30} />
      </Field>
      <Field label="Address or CIDR" hint={problems.ip ?? '203.0.113.7 or 203.0.113.0/24'}>
        <input value={draft.ip} onChange={(event) => edit({ ip: event.target.value })} spellCheck={false} aria-invalid={problems.ip ? true : undefined} size={18} />
      </Field>
      <Field label="Opened more than" hint={problems.olderThan ?? 'ago: 30m, 2h, 7d'}>
        <input value={draft.olderThan} onChange={(event) => edit({ olderThan: event.target.value })} aria-invalid={problems.olderThan ? true : undefined} size={6} />
      </Field>
      <Field label="Opened less than" hint={problems.newerThan ?? 'ago: 30m, 2h, 7d'}>
        <input value={draft.newerThan} onChange={(event) => edit({ newerThan: event.target.value })} aria-invalid={problems.newerThan ? true : undefined} size={6} />
      </Field>
      <label className="check-field">
        <input type="checkbox" checked={draft.impersonated} onChange={(event) => edit({ impersonated: event.target.checked })} />
        Impersonations only
      </label>
      <Button tone="primary" type="submit">
        Apply
      </Button>
      <Button onClick={clear}>Clear</Button>
      {Object.keys(problems).length > 0 ? (
        <span className="filter-problems" role="alert">
          {Object.values(problems).join('; ')}
        </span>
      ) : null}
    </form>
  );
}

/** Who the list is narrowed to, by name, each removable; ids beyond the first few only counted. */
function ChosenUsers({ view, onRemove }: { readonly view: SessionsView; readonly onRemove: (id: string) => void }) {
  const SHOWN = 12;
  if (view.user.length === 0) return null;
  return (
    <ul className="chosen-users" aria-label="Sessions of">
      {view.user.slice(0, SHOWN).map((id) => (
        <ChosenUser key={id} id={id} onRemove={() => onRemove(id)} />
      ))}
      {view.user.length > SHOWN ? <li className="muted">and {view.user.length - SHOWN} more</li> : null}
    </ul>
  );
}

/** Who to add to the filter, found by a part of their email or name rather than an id copied from elsewhere. */
function AddUser({ chosen, onAdd }: { readonly chosen: readonly string[]; readonly onAdd: (id: string) => void }) {
  const [text, setText] = useState('');
  const wanted = text.trim();
  const enabled = wanted.length >= 2;
  // The list endpoint searches one field at a time: a part of an email and a part of a name are both asked.
  const byEmail = useRead(adminEndpoints.listUsers, { query: { searchValue: wanted, searchField: 'email', searchOperator: 'contains', limit: 6 } }, { enabled });
  const byName = useRead(adminEndpoints.listUsers, { query: { searchValue: wanted, searchField: 'name', searchOperator: 'contains', limit: 6 } }, { enabled });
  const found = { isSuccess: byEmail.isSuccess && byName.isSuccess };
  const seen = new Set(chosen);
  const users: User[] = [];
  for (const user of enabled ? [...(byEmail.data?.users ?? []), ...(byName.data?.users ?? [])] : []) {
    if (seen.has(user.id) || users.length === 6) continue;
    seen.add(user.id);
    users.push(user);
  }
  return (
    <div className="add-user">
      <Field label="Add a user">
        <input type="search" value={text} onChange={(event) => setText(event.target.value)} placeholder="part of an email or name" spellCheck={false} />
      </Field>
      {users.length > 0 ? (
        <ul className="add-user-choices" aria-label="Users found">
          {users.map((user) => (
            <li key={user.id}>
              <Button
                onClick={() => {
                  setText('');
                  onAdd(user.id);
                }}
              >
                + {user.name || user.email} <span className="muted">{user.email}</span>
              </Button>
            </li>
          ))}
        </ul>
      ) : wanted.length >= 2 && found.isSuccess ? (
        <span className="muted">nobody else matches</span>
      ) : null}
    </div>
  );
}

function ChosenUser({ id, onRemove }: { readonly id: string; readonly onRemove: () => void }) {
  const user = useRead(consoleOpsEndpoints.opsUser, { params: { id } }, { staleTime: 60_000 });
  const label = user.data?.user.email ?? id;
  return (
    <li className="chosen-user">
      {user.data ? <UserRef id={id} name={user.data.user.name} email={user.data.user.email} /> : <code title={user.error ? 'no such user' : undefined}>{id}</code>}
      <Button aria-label={`Remove ${label} from the filter`} onClick={onRemove}>
        ×
      </Button>
    </li>
  );
}
