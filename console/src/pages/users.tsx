import { adminEndpoints } from '@portcullis/contracts/api/admin';
import { consoleOpsEndpoints } from '@portcullis/contracts/api/console-ops';
import type { User } from '@portcullis/contracts/api/user';
import type { ColumnDef, RowSelectionState } from '@tanstack/react-table';
import { useState } from 'react';
import { z } from 'zod';
import { useRead, useWrite } from '../api/hooks.ts';
import { useSearchState } from '../router.tsx';
import { Badge, Button, ConfirmButton, ErrorNotice, Field, Page, UserRef } from '../ui/components.tsx';
import { DataTable } from '../ui/data-table.tsx';
import { formatAgo, formatInstant } from '../ui/format.ts';

const sortable = ['createdAt', 'email', 'name', 'role', 'banned'] as const;

/** The list's state in the address bar; anything a link gets wrong falls back to the default. */
const usersView = z.object({
  q: z.string().max(320).catch(''),
  field: z.enum(['email', 'name']).catch('email'),
  status: z.enum(['all', 'banned', 'active']).catch('all'),
  sortBy: z.enum(sortable).catch('createdAt'),
  sortDirection: z.enum(['asc', 'desc']).catch('desc'),
  offset: z.coerce.number().int().min(0).catch(0),
  limit: z.coerce.number().int().min(1).max(200).catch(50),
});

const columns: ColumnDef<User, unknown>[] = [
  { id: 'name', header: 'User', enableSorting: true, cell: ({ row }) => <UserRef id={row.original.id} name={row.original.name} email={row.original.email} /> },
  { id: 'email', header: 'Email', enableSorting: true, cell: ({ row }) => row.original.email },
  { id: 'role', header: 'Role', enableSorting: true, cell: ({ row }) => row.original.role },
  {
    id: 'banned',
    header: 'Status',
    enableSorting: true,
    cell: ({ row }) =>
      row.original.banned ? (
        <Badge tone="bad">banned{row.original.banExpires ? ` until ${formatInstant(row.original.banExpires)}` : ''}</Badge>
      ) : row.original.emailVerified ? (
        <Badge tone="ok">active</Badge>
      ) : (
        <Badge tone="warn">unverified</Badge>
      ),
  },
  { id: 'createdAt', header: 'Created', enableSorting: true, cell: ({ row }) => <span title={formatInstant(row.original.createdAt)}>{formatAgo(row.original.createdAt)}</span> },
];

export default function UsersPage() {
  const [view, setView] = useSearchState(usersView);
  const [selection, setSelection] = useState<RowSelectionState>({});
  const [banReason, setBanReason] = useState('');
  const users = useRead(adminEndpoints.listUsers, {
    query: {
      ...(view.q ? { searchValue: view.q, searchField: view.field, searchOperator: 'contains' as const } : {}),
      ...(view.status === 'all' ? {} : { filterField: 'banned', filterOperator: 'eq' as const, filterValue: view.status === 'banned' ? 'true' : 'false' }),
      sortBy: view.sortBy,
      sortDirection: view.sortDirection,
      limit: view.limit,
      offset: view.offset,
    },
  });
  const bulk = useWrite(consoleOpsEndpoints.opsUsersBulk);
  const chosen = Object.keys(selection).filter((id) => selection[id]);
  const act = (action: 'revoke-sessions' | 'ban' | 'unban') =>
    bulk.mutate({ body: { action, userIds: chosen, ...(action === 'ban' && banReason ? { banReason } : {}) } }, { onSuccess: () => setSelection({}) });

  return (
    <Page title="Users">
      <form className="filters" role="search" onSubmit={(event) => event.preventDefault()}>
        <Field label="Search">
          <input type="search" value={view.q} onChange={(event) => setView({ q: event.target.value, offset: 0 }, { replace: true })} placeholder="contains…" />
        </Field>
        <Field label="In">
          <select value={view.field} onChange={(event) => setView({ field: event.target.value as 'email' | 'name', offset: 0 })}>
            <option value="email">email</option>
            <option value="name">name</option>
          </select>
        </Field>
        <Field label="Status">
          <select value={view.status} onChange={(event) => setView({ status: event.target.value as 'all' | 'banned' | 'active', offset: 0 })}>
            <option value="all">all</option>
            <option value="active">not banned</option>
            <option value="banned">banned</option>
          </select>
        </Field>
      </form>
      {chosen.length > 0 ? (
        <div className="filters" role="group" aria-label="Bulk actions">
          <span>{chosen.length} selected</span>
          <ConfirmButton label="Revoke their sessions" confirm={`Sign ${chosen.length} users out everywhere?`} onConfirm={() => act('revoke-sessions')} />
          <input aria-label="Ban reason" placeholder="ban reason" value={banReason} onChange={(event) => setBanReason(event.target.value)} />
          <ConfirmButton label="Ban" confirm={`Ban ${chosen.length} users?`} onConfirm={() => act('ban')} />
          <Button onClick={() => act('unban')}>Unban</Button>
        </div>
      ) : null}
      {bulk.data ? (
        <div className={`notice ${bulk.data.failed > 0 ? 'tone-bad' : 'tone-ok'}`} role="status">
          {bulk.data.action}: {bulk.data.succeeded} done, {bulk.data.failed} refused
          {bulk.data.results
            .filter((r) => !r.ok)
            .map((r) => (
              <div key={r.user.id}>
                {r.user.email ?? r.user.id}: {r.message} <code>{r.code}</code>
              </div>
            ))}
        </div>
      ) : null}
      <ErrorNotice error={bulk.error ?? users.error} />
      <DataTable
        caption="Users"
        columns={columns}
        rows={users.data?.users ?? []}
        total={users.data?.total ?? 0}
        rowId={(user) => user.id}
        page={{ offset: view.offset, limit: view.limit }}
        onPage={(page) => setView(page)}
        sort={{ sortBy: view.sortBy, sortDirection: view.sortDirection }}
        onSort={(sort) => setView({ sortBy: (sort.sortBy ?? 'createdAt') as (typeof sortable)[number], sortDirection: sort.sortDirection ?? 'desc', offset: 0 })}
        selection={selection}
        onSelection={setSelection}
        busy={users.isFetching}
      />
    </Page>
  );
}
