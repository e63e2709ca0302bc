import { consoleOpsEndpoints, opsOrganizationSortFields, type OpsOrganizationSummary } from '@portcullis/contracts/api/console-ops';
import type { ColumnDef } from '@tanstack/react-table';
import { z } from 'zod';
import { useRead } from '../api/hooks.ts';
import { useSearchState } from '../router.tsx';
import { ErrorNotice, Field, OrganizationRef, Page } from '../ui/components.tsx';
import { DataTable } from '../ui/data-table.tsx';
import { formatAgo, formatCount, formatInstant } from '../ui/format.ts';

/** The list's state in the address bar; anything a link gets wrong falls back to the default. */
export const organizationsView = z.object({
  q: z.string().max(256).catch(''),
  sortBy: z.enum(opsOrganizationSortFields).catch('createdAt'),
  sortDirection: z.enum(['asc', 'desc']).catch('desc'),
  offset: z.coerce.number().int().min(0).catch(0),
  limit: z.coerce.number().int().min(1).max(200).catch(50),
});

const columns: ColumnDef<OpsOrganizationSummary, unknown>[] = [
  { id: 'name', header: 'Organization', enableSorting: true, cell: ({ row }) => <OrganizationRef id={row.original.id} name={row.original.name} /> },
  { id: 'slug', header: 'Slug', enableSorting: true, cell: ({ row }) => <code>{row.original.slug}</code> },
  { id: 'memberCount', header: 'Members', enableSorting: true, cell: ({ row }) => formatCount(row.original.memberCount) },
  { id: 'createdAt', header: 'Created', enableSorting: true, cell: ({ row }) => <span title={formatInstant(row.original.createdAt)}>{formatAgo(row.original.createdAt)}</span> },
];

export default function OrganizationsPage() {
  const [view, setView] = useSearchState(organizationsView);
  const organizations = useRead(consoleOpsEndpoints.opsOrganizations, {
    query: { ...(view.q.trim() ? { search: view.q.trim() } : {}), sortBy: view.sortBy, sortDirection: view.sortDirection, limit: view.limit, offset: view.offset },
  });
  return (
    <Page title="Organizations">
      <form className="filters" role="search" onSubmit={(event) => event.preventDefault()}>
        <Field label="Search" hint="part of the name or the slug">
          <input type="search" value={view.q} onChange={(event) => setView({ q: event.target.value, offset: 0 }, { replace: true })} />
        </Field>
      </form>
      <ErrorNotice error={organizations.error} />
      <DataTable
        caption="Organizations"
        columns={columns}
        rows={organizations.data?.organizations ?? []}
        total={organizations.data?.total ?? 0}
        rowId={(organization) => organization.id}
        page={{ offset: view.offset, limit: view.limit }}
        onPage={(page) => setView(page)}
        sort={{ sortBy: view.sortBy, sortDirection: view.sortDirection }}
        onSort={(sort) =>
          setView({ sortBy: (sort.sortBy ?? 'createdAt') as (typeof opsOrganizationSortFields)[number], sortDirection: sort.sortDirection ?? 'desc', offset: 0 })
        }
        busy={organizations.isFetching}
      />
    </Page>
  );
}
