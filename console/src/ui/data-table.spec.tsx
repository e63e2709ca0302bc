// @vitest-environment happy-dom
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import type { ColumnDef } from '@tanstack/react-table';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DataTable, type PageState, type SortState } from './data-table.tsx';

interface Row {
  readonly id: string;
  readonly name: string;
}

const columns: ColumnDef<Row, unknown>[] = [
  { id: 'name', header: 'Name', enableSorting: true, cell: ({ row }) => row.original.name },
  { id: 'id', header: 'Id', enableSorting: false, cell: ({ row }) => row.original.id },
];

const rows: Row[] = [
  { id: 'a', name: 'Ann' },
  { id: 'b', name: 'Bo' },
];

function table(props: { page?: PageState; sort?: SortState; onPage?: (page: PageState) => void; onSort?: (sort: SortState) => void; onSelection?: (s: Record<string, boolean>) => void; total?: number }) {
  return render(
    <DataTable
      caption="People"
      columns={columns}
      rows={rows}
      total={props.total ?? 120}
      rowId={(row) => row.id}
      page={props.page ?? { offset: 50, limit: 50 }}
      onPage={props.onPage ?? (() => {})}
      sort={props.sort ?? { sortBy: 'name', sortDirection: 'asc' }}
      onSort={props.onSort ?? (() => {})}
      {...(props.onSelection ? { selection: {}, onSelection: props.onSelection } : {})}
    />,
  );
}

afterEach(cleanup);

describe('DataTable', () => {
  it('shows which rows of the server total this page holds', () => {
    table({});
    expect(screen.getByText('51–52 of 120')).toBeDefined();
    expect(within(screen.getByRole('table', { name: 'People' })).getAllByRole('row')).toHaveLength(3);
  });

  it('asks the server for the next and previous pages, and for another page size from the first page', () => {
    const onPage = vi.fn();
    table({ onPage });
    fireEvent.click(screen.getByRole('button', { name: 'Next' }));
    fireEvent.click(screen.getByRole('button', { name: 'Previous' }));
    fireEvent.change(screen.getByRole('combobox'), { target: { value: '100' } });
    expect(onPage.mock.calls).toEqual([[{ offset: 100, limit: 50 }], [{ offset: 0, limit: 50 }], [{ offset: 0, limit: 100 }]]);
  });

  it('offers no next page on the last one', () => {
    table({ page: { offset: 100, limit: 50 }, total: 102 });
    expect(screen.getByRole<HTMLButtonElement>('button', { name: 'Next' }).disabled).toBe(true);
  });

  it('marks the sorted column and asks for the other direction; unsortable columns offer nothing', () => {
    const onSort = vi.fn();
    table({ onSort });
    const header = screen.getByRole('columnheader', { name: /Name/ });
    expect(header.getAttribute('aria-sort')).toBe('ascending');
    fireEvent.click(within(header).getByRole('button'));
    expect(onSort).toHaveBeenCalledWith({ sortBy: 'name', sortDirection: 'desc' });
    expect(within(screen.getByRole('columnheader', { name: 'Id' })).queryByRole('button')).toBeNull();
  });

  it('selects rows by id for bulk actions', () => {
    const onSelection = vi.fn();
    table({ onSelection });
    fireEvent.click(screen.getByRole('checkbox', { name: 'Select b' }));
    expect(onSelection).toHaveBeenCalledWith({ b: true });
  });
});
