/**
 * Test support of the parity suite: what both engines are asked, through the one engine
 * interface (lib/analytics/engine-interface.ts) that routes, pages, statements and alerts
 * use, and written to CSV by the same writers (REPORTS) — so that only the engines differ.
 */
import type { AnalyticsEngine } from "@/lib/analytics/engine-interface";
import { MAX_PER_PAGE, type Filters } from "@/lib/analytics/filters";
import type { CallListRow } from "@/lib/analytics/report-types";
import { REPORTS, type ReportName } from "@/lib/analytics/reports";
import { csvContext } from "@/lib/export/csv";
import type { Scope } from "@/lib/analytics/scope";
import { textOf } from "./parity-compare";

/** A report's CSV as its route writes it (derived ISO columns in the filters' zone). */
export async function csvText<N extends ReportName>(engine: AnalyticsEngine, name: N, f: Filters, scope: Scope): Promise<string> {
  return textOf(REPORTS[name].csv.stream(await engine.csv(name, f, scope), undefined, csvContext(f.tz)));
}

/** Every call of the list in its order, as list rows (page by page: the JSON the routes send). */
export async function allCalls(engine: AnalyticsEngine, f: Filters, scope: Scope): Promise<CallListRow[]> {
  const out: CallListRow[] = [];
  for (let page = 1; ; page++) {
    const answer = await engine.report("calls", { ...f, page, perPage: MAX_PER_PAGE }, scope);
    out.push(...answer.data);
    if (page >= answer.meta.pagination.total_pages) return out;
  }
}

/** The calls CSV's rows as arrays in column order (an engine that writes lines itself gives none: the suite says so). */
export async function callArrays(engine: AnalyticsEngine, f: Filters, scope: Scope): Promise<unknown[][]> {
  const out: unknown[][] = [];
  for await (const batch of await engine.csv("calls", f, scope)) {
    if (typeof batch === "string" || batch instanceof Uint8Array) throw new Error("the calls CSV came as written lines, not rows");
    out.push(...batch);
  }
  return out;
}
