/**
 * Test support of the parity suite: the in-memory engine's answers over the same SQLite
 * warehouse, in-process (no worker) — the one place the suite reaches that engine.
 */
import type { Db } from "@/db/client";
import { getCall, type CallDetail, type Filters, type Scope } from "@/lib/analytics";
import { REPORTS, type ReportName } from "@/lib/analytics/reports";
import { CALL_RAW_COLUMNS } from "@/lib/export/columns";
import { csvRawStream, csvStream, type CsvColumn } from "@/lib/export/csv";

type Row = Record<string, unknown>;

export interface MemoryAnswers {
  report(name: ReportName, f: Filters, scope: Scope): unknown;
  /** A report's CSV rows as objects (the calls list's as list rows), in the CSV's order. */
  rows(name: ReportName, f: Filters, scope: Scope): Row[];
  /** A report's CSV, as the route writes it. */
  csvText(name: ReportName, f: Filters, scope: Scope): Promise<string>;
  call(ref: { app: string; sessionId: string }, scope: Scope): CallDetail;
}

export const columnsOf = (name: ReportName) => REPORTS[name].csv.columns as ReadonlyArray<CsvColumn<Row>>;
export const RAW_CALL_COLUMNS = CALL_RAW_COLUMNS;

export function memoryAnswers(db: Db): MemoryAnswers {
  const rows = (name: ReportName, f: Filters, scope: Scope) => [...(REPORTS[name].csv.rows as (db: Db, f: Filters, s: Scope) => Iterable<Row>)(db, f, scope)];
  return {
    report: (name, f, scope) => (REPORTS[name].json as (db: Db, f: Filters, s: Scope) => unknown)(db, f, scope),
    rows,
    csvText: (name, f, scope) =>
      new Response(name === "calls" ? csvRawStream(REPORTS.calls.csv.raw!.rows(db, f, scope), CALL_RAW_COLUMNS) : csvStream(rows(name, f, scope), columnsOf(name))).text(),
    call: (ref, scope) => getCall(db, ref, scope),
  };
}
