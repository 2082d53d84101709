import { db as warehouse } from "@/db";
import type { Db } from "@/db/client";
import { authorize as realAuthorize, type Caller } from "@/lib/auth/authorize";
import { csvRawResponse, csvResponse, type CsvColumn, type RawCsvColumn } from "@/lib/export/csv";
import { toErrorResponse } from "@/lib/http/errors";
import { logger } from "@/lib/log/logger";
import { parseFilters, type Filters } from "./filters";
import type { Scope } from "./query";

/**
 * The whole of an analytics route handler: parse the filters, authorize, run the
 * report, answer JSON or a streamed CSV. Route files only name the report.
 */
export interface ReportRoute<Json, Row> {
  /** Names the CSV file: callboard-<name>-<date>.csv. */
  name: string;
  json: (db: Db, f: Filters, scope: Scope) => Json;
  /** Rows of the CSV (all of them, no paging) and their columns. */
  csv: {
    rows: (db: Db, f: Filters, scope: Scope) => Iterable<Row>;
    columns: ReadonlyArray<CsvColumn<Row>>;
    /** The same rows as arrays in column order (large exports: no object per row). */
    raw?: { rows: (db: Db, f: Filters, scope: Scope) => Iterable<unknown[]>; columns: ReadonlyArray<RawCsvColumn> };
  };
}

export interface RouteDeps {
  db: () => Db;
  authorize: (request: Request) => Promise<Caller>;
}

const productionDeps: RouteDeps = { db: warehouse, authorize: realAuthorize };

export async function handleReport<Json, Row>(request: Request, report: ReportRoute<Json, Row>, deps: RouteDeps = productionDeps): Promise<Response> {
  try {
    const f = parseFilters(new URL(request.url).searchParams);
    const caller = await deps.authorize(request);
    const db = deps.db();
    if (f.format === "csv") {
      // Resolve (and 404) before the first byte; rows are then pulled as the client reads.
      const raw = report.csv.raw;
      if (raw) return csvRawResponse(report.name, raw.rows(db, f, caller), raw.columns, request.signal);
      const rows = report.csv.rows(db, f, caller);
      return csvResponse(report.name, rows, report.csv.columns, request.signal);
    }
    return Response.json(report.json(db, f, caller), { headers: { "Cache-Control": "private, no-store" } });
  } catch (error) {
    return toErrorResponse(error, (e) => logger.error({ err: e, route: report.name }, "analytics route failed"));
  }
}

/** A JSON `{data}` answer for reports that return a plain list. */
export const listOf =
  <Row>(fn: (db: Db, f: Filters, scope: Scope) => Row[]) =>
  (db: Db, f: Filters, scope: Scope) => ({ data: fn(db, f, scope) });
