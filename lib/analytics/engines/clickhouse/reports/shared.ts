import type { Page } from "@/lib/analytics";

/** Minutes from the integer thousandths ClickHouse holds and sums exactly (the in-memory engine's round3 of the same sum). */
export const minutes = (x1000: number): number => x1000 / 1000;

/** A decimal rounded to thousandths, as every report sends averages and shares. */
export const round3 = (x: number): number => Math.round(x * 1000) / 1000;

/** A paged answer: `{data, meta: {pagination}}`. */
export function pageOf<T>(data: T[], total: number, f: { page: number; perPage: number }): Page<T> {
  return { data, meta: { pagination: { total, count: data.length, per_page: f.perPage, current_page: f.page, total_pages: Math.ceil(total / f.perPage) } } };
}
