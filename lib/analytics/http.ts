import { db as warehouse } from "@/db";
import type { Db } from "@/db/client";
import { authorize as realAuthorize, type Caller } from "@/lib/auth/authorize";
import { csvRawResponse, csvResponse } from "@/lib/export/csv";
import { toErrorResponse } from "@/lib/http/errors";
import { logger } from "@/lib/log/logger";
import { parseFilters, type Filters } from "./filters";
import type { Scope } from "./query";
import type { HeadFirstOrder, ReportRoute, StoreValuesOf } from "./report-route";
import { runOffThread, storeValuesOffThread } from "./worker-host";

export { listOf, type ReportRoute } from "./report-route";

/**
 * The whole of an analytics route handler: parse the filters, authorize, run the
 * report, answer JSON or a streamed CSV. Route files only name the report. Reports that
 * scan the in-memory store run on the analytics worker when the server started one
 * (worker-host.ts), so the event loop keeps serving while they compute.
 */

export interface RouteDeps {
  db: () => Db;
  authorize: (request: Request) => Promise<Caller>;
  /** Runs a report off the event loop, or returns undefined to run it in-process (absent: always in-process). */
  offThread?: <Json, Row>(report: ReportRoute<Json, Row>, job: "json" | "rows" | "order", f: Filters, scope: Scope, signal?: AbortSignal) => Promise<unknown> | undefined;
  /** With an order from off the thread: where the raw rows get the store's values of a batch (absent: rows read whole). */
  storeValues?: (signal?: AbortSignal) => StoreValuesOf | undefined;
}

const productionDeps: RouteDeps = { db: warehouse, authorize: realAuthorize, offThread: runOffThread, storeValues: storeValuesOffThread };

export async function handleReport<Json, Row>(request: Request, report: ReportRoute<Json, Row>, deps: RouteDeps = productionDeps): Promise<Response> {
  try {
    const f = parseFilters(new URL(request.url).searchParams);
    const caller = await deps.authorize(request);
    const db = deps.db();
    if (f.format === "csv") {
      // Resolve (and 404) before the first byte; rows are then pulled as the client reads.
      const raw = report.csv.raw;
      if (raw) {
        // The order comes from the store's thread (the worker) when there is one, head
        // first: the response starts with the head's rows while the worker sorts the rest.
        // The rows are read here, batch by batch, as the client reads, with the store's
        // values of each batch from the worker too.
        const pendingOrder = raw.order ? deps.offThread?.(report, "order", f, caller, request.signal) : undefined;
        const order = pendingOrder ? ((await pendingOrder) as HeadFirstOrder) : undefined;
        const values = order ? deps.storeValues?.(request.signal) : undefined;
        return csvRawResponse(report.name, raw.rows(db, f, caller, order, values), raw.columns, request.signal);
      }
      const pendingRows = deps.offThread?.(report, "rows", f, caller, request.signal);
      const rows = pendingRows ? ((await pendingRows) as Row[]) : report.csv.rows(db, f, caller);
      return csvResponse(report.name, rows, report.csv.columns, request.signal);
    }
    const pending = deps.offThread?.(report, "json", f, caller, request.signal);
    const body = pending ? ((await pending) as Json) : report.json(db, f, caller);
    return Response.json(body, { headers: { "Cache-Control": "private, no-store" } });
  } catch (error) {
    // The client went away while its report waited for the worker: nobody reads this.
    if (request.signal.aborted) return new Response(null, { status: 499 });
    return toErrorResponse(error, (e) => logger.error({ err: e, route: report.name }, "analytics route failed"));
  }
}
