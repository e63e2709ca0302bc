import { flexRender, getCoreRowModel, useReactTable, type ColumnDef, type RowSelectionState } from '@tanstack/react-table';
import { formatCount } from './format.ts';
import { Button } from './components.tsx';

export interface SortState {
  readonly sortBy?: string | undefined;
  readonly sortDirection?: 'asc' | 'desc' | undefined;
}

export interface PageState {
  readonly offset: number;
  readonly limit: number;
}

interface DataTableProps<Row> {
  readonly caption: string;
  readonly columns: ColumnDef<Row, unknown>[];
  readonly rows: readonly Row[];
  /** The server's count of every row the filters match, not only this page's. */
  readonly total: number;
  readonly rowId: (row: Row) => string;
  readonly page: PageState;
  readonly onPage: (page: PageState) => void;
  /** Sorted by the server: a column with `enableSorting: true` (its id one the api sorts by) offers it. */
  readonly sort?: SortState;
  readonly onSort?: (sort: SortState) => void;
  readonly selection?: RowSelectionState;
  readonly onSelection?: (selection: RowSelectionState) => void;
  readonly busy?: boolean;
}

/**
 * Every paged list: sorting and paging are the server's (the table only says what was asked), the total is
 * always shown, and the state comes from and goes to the address bar through the page that owns it.
 */
export function DataTable<Row>({ caption, columns, rows, total, rowId, page, onPage, sort, onSort, selection, onSelection, busy }: DataTableProps<Row>) {
  // The table is rebuilt from props on every render (its state is the page's), so nothing is memoized to go stale.
  // eslint-disable-next-line react-hooks/incompatible-library
  const table = useReactTable<Row>({
    data: rows as Row[],
    columns,
    getCoreRowModel: getCoreRowModel(),
    getRowId: rowId,
    manualSorting: true,
    manualPagination: true,
    enableRowSelection: onSelection !== undefined,
    enableSortingRemoval: false,
    state: {
      sorting: sort?.sortBy ? [{ id: sort.sortBy, desc: sort.sortDirection === 'desc' }] : [],
      rowSelection: selection ?? {},
    },
    onRowSelectionChange: (updater) => {
      const next = typeof updater === 'function' ? updater(selection ?? {}) : updater;
      onSelection?.(next);
    },
  });
  const first = total === 0 ? 0 : page.offset + 1;
  const last = Math.min(page.offset + rows.length, total);
  return (
    <div className="table-wrap" aria-busy={busy ?? false}>
      <table className="data-table">
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          {table.getHeaderGroups().map((group) => (
            <tr key={group.id}>
              {onSelection ? (
                <th scope="col" className="select-cell">
                  <input
                    type="checkbox"
                    aria-label="Select every row of this page"
                    checked={table.getIsAllPageRowsSelected()}
                    onChange={table.getToggleAllPageRowsSelectedHandler()}
                  />
                </th>
              ) : null}
              {group.headers.map((header) => {
                const sorted = header.column.getIsSorted();
                const label = flexRender(header.column.columnDef.header, header.getContext());
                return (
                  <th key={header.id} scope="col" aria-sort={sorted === 'asc' ? 'ascending' : sorted === 'desc' ? 'descending' : undefined}>
                    {header.column.columnDef.enableSorting === true && onSort ? (
                      <button
                        type="button"
                        className="sort-button"
                        onClick={() => onSort({ sortBy: header.column.id, sortDirection: sorted === 'asc' ? 'desc' : 'asc' })}
                      >
                        {label}
                        <span aria-hidden="true">{sorted === 'asc' ? ' ▲' : sorted === 'desc' ? ' ▼' : ' ↕'}</span>
                      </button>
                    ) : (
                      label
                    )}
                  </th>
                );
              })}
            </tr>
          ))}
        </thead>
        <tbody>
          {table.getRowModel().rows.map((row) => (
            <tr key={row.id} className={row.getIsSelected() ? 'selected' : undefined}>
              {onSelection ? (
                <td className="select-cell">
                  <input type="checkbox" aria-label={`Select ${row.id}`} checked={row.getIsSelected()} onChange={row.getToggleSelectedHandler()} />
                </td>
              ) : null}
              {row.getVisibleCells().map((cell) => (
                <td key={cell.id}>{flexRender(cell.column.columnDef.cell, cell.getContext())}</td>
              ))}
            </tr>
          ))}
          {rows.length === 0 ? (
            <tr>
              <td colSpan={columns.length + (onSelection ? 1 : 0)} className="empty">
                Nothing matches.
              </td>
            </tr>
          ) : null}
        </tbody>
      </table>
      <nav className="pager" aria-label={`${caption} pages`}>
        <span className="pager-count">
          {formatCount(first)}–{formatCount(last)} of {formatCount(total)}
        </span>
        <Button disabled={page.offset === 0} onClick={() => onPage({ ...page, offset: Math.max(0, page.offset - page.limit) })}>
          Previous
        </Button>
        <Button disabled={page.offset + page.limit >= total} onClick={() => onPage({ ...page, offset: page.offset + page.limit })}>
          Next
        </Button>
        <label className="pager-size">
          Rows
          <select value={page.limit} onChange={(event) => onPage({ offset: 0, limit: Number(event.target.value) })}>
            {[25, 50, 100, 200].map((size) => (
              <option key={size} value={size}>
                {size}
              </option>
            ))}
          </select>
        </label>
      </nav>
    </div>
  );
}
