import { authorize as realAuthorize, type Caller } from "@/lib/auth/authorize";
import { csvContext, csvHeaders } from "@/lib/export/csv";
import { csvDownloadName } from "./csv-filename";
import { toErrorResponse } from "@/lib/http/errors";
import { logger } from "@/lib/log/logger";
import { analyticsEngine, type AnalyticsEngine } from "./engine";
import { parseFilters } from "./filters";
import { REPORT_CSV_WRITERS, type ReportName } from "./report-csv-writers";

/**
 * The whole of an analytics route handler: authorize, parse the filters, ask the
 * engine for the report, answer JSON or a streamed CSV. Route files only name the
 * report; which engine answers, and where it computes, is the engine's business.
 */

export interface RouteDeps {
  authorize: (request: Request) => Promise<Caller>;
  engine: () => AnalyticsEngine;
}

const productionDeps: RouteDeps = { authorize: realAuthorize, engine: analyticsEngine };

export const privateJson = { "Cache-Control": "private, no-store" };

export async function handleReport<N extends ReportName>(request: Request, name: N, deps: RouteDeps = productionDeps): Promise<Response> {
  try {
    // Who asks, then what they ask for (as every route): an unsigned request is a 401 whatever its filters.
    const caller = await deps.authorize(request);
    const f = parseFilters(new URL(request.url).searchParams);
    const engine = deps.engine();
    if (f.format === "csv") {
      // Resolved (and a 404 answered) before the first byte; rows are then pulled as the client reads.
      const batches = await engine.csv(name, f, caller, request.signal);
      // ISO columns in the filters' zone; the file named for what it holds (report, filters, range).
      return new Response(REPORT_CSV_WRITERS[name].csv.stream(batches, request.signal, csvContext(f.tz)), { headers: csvHeaders(csvDownloadName(name, f)) });
    }
    return Response.json(await engine.report(name, f, caller, request.signal), { headers: privateJson });
  } catch (error) {
    // The client went away while its report waited for the engine: nobody reads this.
    if (request.signal.aborted) return new Response(null, { status: 499 });
    return toErrorResponse(error, (e) => logger.error({ err: e, route: name }, "analytics route failed"));
  }
}
