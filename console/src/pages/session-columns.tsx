import type { OpsSession } from '@portcullis/contracts/api/console-ops';
import type { ColumnDef } from '@tanstack/react-table';
import { Badge, Button, ConfirmButton, UserRef } from '../ui/components.tsx';
import { formatAgo, formatInstant } from '../ui/format.ts';

// The columns of a list of live sessions, on the sessions page and on a user's page alike.

/** A user agent cut to what fits a cell; the whole string stays in the title. */
export function shortAgent(agent: string | null): string {
  if (!agent) return '—';
  return agent.length > 60 ? `${agent.slice(0, 57)}…` : agent;
}

function When({ at }: { readonly at: string }) {
  return <span title={formatInstant(at)}>{formatAgo(at)}</span>;
}

export interface SessionColumnsOptions {
  /** Shown where the list is of several users' sessions. */
  readonly withUser: boolean;
  readonly onRevoke: (session: OpsSession) => void;
  /** Narrows the list to one user (the sessions page). */
  readonly onOnlyUser?: (userId: string) => void;
  readonly busy?: boolean;
}

export function sessionColumns({ withUser, onRevoke, onOnlyUser, busy }: SessionColumnsOptions): ColumnDef<OpsSession, unknown>[] {
  const user: ColumnDef<OpsSession, unknown> = {
    id: 'user',
    header: 'User',
    cell: ({ row }) => (
      <span className="session-user">
        <UserRef id={row.original.user.id} name={row.original.user.name} email={row.original.user.email} />
        {onOnlyUser ? (
          <Button aria-label={`Only sessions of ${row.original.user.email ?? row.original.user.id}`} onClick={() => onOnlyUser(row.original.user.id)}>
            only this user
          </Button>
        ) : null}
      </span>
    ),
  };
  const columns: ColumnDef<OpsSession, unknown>[] = [
    {
      id: 'ipAddress',
      header: 'Address',
      cell: ({ row }) => (row.original.ipAddress ? <code>{row.original.ipAddress}</code> : <span className="muted">—</span>),
    },
    {
      id: 'userAgent',
      header: 'Client',
      cell: ({ row }) => (
        <span className="muted" title={row.original.userAgent ?? undefined}>
          {shortAgent(row.original.userAgent)}
        </span>
      ),
    },
    { id: 'createdAt', header: 'Opened', enableSorting: true, cell: ({ row }) => <When at={row.original.createdAt} /> },
    { id: 'updatedAt', header: 'Last refresh', enableSorting: true, cell: ({ row }) => <When at={row.original.updatedAt} /> },
    { id: 'expiresAt', header: 'Expires', enableSorting: true, cell: ({ row }) => <When at={row.original.expiresAt} /> },
    {
      id: 'impersonatedBy',
      header: 'Impersonation',
      cell: ({ row }) =>
        row.original.impersonatedBy ? (
          <span className="session-user">
            <Badge tone="warn">by</Badge>
            <UserRef id={row.original.impersonatedBy.id} name={row.original.impersonatedBy.name} email={row.original.impersonatedBy.email} />
          </span>
        ) : (
          <span className="muted">—</span>
        ),
    },
    {
      id: 'actions',
      header: 'Actions',
      cell: ({ row }) => (
        <ConfirmButton label="Revoke" confirm="End this session?" disabled={busy ?? false} onConfirm={() => onRevoke(row.original)} />
      ),
    },
  ];
  return withUser ? [user, ...columns] : columns;
}
