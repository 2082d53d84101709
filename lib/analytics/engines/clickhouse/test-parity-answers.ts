/**
 * Test support of the parity suite: what both engines are asked, through the one engine
 * interface (lib/analytics/engine-interface.ts) that routes, pages, statements and alerts
 * use, and written to CSV by the same writers (REPORT_CSV_WRITERS) — so that only the engines differ.
 */
import type { AnalyticsEngine } from "@/lib/analytics/engine-interface";
import type { Filters } from "@/lib/analytics/filters";
import { REPORT_CSV_WRITERS, type ReportName } from "@/lib/analytics/report-csv-writers";
import { csvContext } from "@/lib/export/csv";
import type { Scope } from "@/lib/analytics/scope";

/** A report's CSV as its route writes it (derived ISO columns in the filters' zone). */
export async function csvText<N extends ReportName>(engine: AnalyticsEngine, name: N, f: Filters, scope: Scope): Promise<string> {
  return textOf(REPORT_CSV_WRITERS[name].csv.stream(await engine.csv(name, f, scope), undefined, csvContext(f.tz)));
}

export { allCalls } from "@/lib/analytics/test-fixtures";

/** A CSV stream's text. */
export const textOf = (stream: ReadableStream<Uint8Array>): Promise<string> => new Response(stream).text();

/** Every row of batches, plain or async. */
export async function collect<T>(batches: Iterable<ReadonlyArray<T>> | AsyncIterable<ReadonlyArray<T>>): Promise<T[]> {
  const out: T[] = [];
  for await (const b of batches) out.push(...b);
  return out;
}
