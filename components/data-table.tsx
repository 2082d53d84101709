"use client";

import { flexRender, getCoreRowModel, useReactTable, type ColumnDef, type SortingState } from "@tanstack/react-table";
import type { Pagination } from "@/lib/analytics";
import type { SortKey } from "@/lib/ui/filter-params";
import { Pager } from "./pager";
import { ScrollBox } from "./scroll-box";

/** `hide`: the column is left out below a tablet's or a phone's width (globals.css). */
export type Column<T> = ColumnDef<T, unknown> & { meta?: { numeric?: boolean; sortKey?: SortKey; hide?: "tablet" | "phone" } };

function cellClass(meta: Column<unknown>["meta"]): string | undefined {
  const names = [meta?.numeric ? "num" : "", meta?.hide ? `hide-${meta.hide}` : ""].filter(Boolean).join(" ");
  return names || undefined;
}

/**
 * A server-paginated, server-sorted table (@tanstack/react-table in manual mode): the
 * rows are one page of the API; sorting and paging change the URL, which refetches.
 * Low-priority columns are left out on a narrow screen; what is still too wide scrolls
 * inside its own box, which says so (ScrollBox).
 */
export function DataTable<T>({
  caption,
  columns,
  rows,
  rowKey,
  rowProps,
  sort,
  order,
  onSort,
  pagination,
  onPage,
}: {
  caption: string;
  columns: Column<T>[];
  rows: T[];
  rowKey: (row: T) => string;
  rowProps?: (row: T) => Record<string, string>;
  sort?: SortKey;
  order?: "asc" | "desc";
  onSort?: (sort: SortKey, order: "asc" | "desc") => void;
  /** The API's own `meta.pagination` of a server-paged report. */
  pagination?: Pick<Pagination, "current_page" | "total_pages" | "total">;
  onPage?: (page: number) => void;
}) {
  const page = pagination?.current_page;
  const pageCount = pagination?.total_pages;
  const sorting: SortingState = sort ? columns.filter((c) => c.meta?.sortKey === sort).map((c) => ({ id: String(c.id), desc: order !== "asc" })) : [];
  // Known and harmless here: the table is rebuilt from props on every render.
  // eslint-disable-next-line react-hooks/incompatible-library
  const table = useReactTable({
    data: rows,
    columns,
    getRowId: rowKey,
    getCoreRowModel: getCoreRowModel(),
    manualPagination: true,
    manualSorting: true,
    pageCount: pageCount ?? -1,
    state: { sorting, pagination: { pageIndex: (page ?? 1) - 1, pageSize: rows.length || 1 } },
  });

  return (
    <>
      <ScrollBox label={caption}>
        <table className="data-table">
          <caption className="sr-only">{caption}</caption>
          <thead>
            {table.getHeaderGroups().map((hg) => (
              <tr key={hg.id}>
                {hg.headers.map((h) => {
                  const meta = (h.column.columnDef as Column<T>).meta;
                  const active = meta?.sortKey !== undefined && meta.sortKey === sort;
                  const content = flexRender(h.column.columnDef.header, h.getContext());
                  return (
                    <th key={h.id} scope="col" className={cellClass(meta)} aria-sort={active ? (order === "asc" ? "ascending" : "descending") : undefined}>
                      {meta?.sortKey && onSort ? (
                        <button
                          type="button"
                          className="sort-button"
                          data-sort={meta.sortKey}
                          onClick={() => onSort(meta.sortKey!, active && order === "desc" ? "asc" : "desc")}
                        >
                          {content}
                          <span aria-hidden="true" className="sort-arrow">
                            {active ? (order === "asc" ? "▲" : "▼") : "↕"}
                          </span>
                        </button>
                      ) : (
                        content
                      )}
                    </th>
                  );
                })}
              </tr>
            ))}
          </thead>
          <tbody>
            {table.getRowModel().rows.map((row) => (
              <tr key={row.id} {...rowProps?.(row.original)}>
                {row.getVisibleCells().map((cell) => {
                  const meta = (cell.column.columnDef as Column<T>).meta;
                  return (
                    <td key={cell.id} className={cellClass(meta)}>
                      {flexRender(cell.column.columnDef.cell, cell.getContext())}
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollBox>
      {onPage && page !== undefined && pageCount !== undefined ? <Pager page={page} pageCount={pageCount} total={pagination?.total} onPage={onPage} /> : null}
    </>
  );
}
