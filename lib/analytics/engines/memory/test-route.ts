/**
 * The analytics routes over a memory engine built from explicit parts, for this
 * folder's tests: `handleReport(request, REPORT_ANSWERERS.x, { db, authorize, offThread?,
 * storeValues? })` runs the production route handler (lib/analytics/report-handler.ts) with a
 * memory engine on `db` whose reports go off the thread only where `offThread` says
 * (absent: all in-process). `offThread` is the worker's untyped shape the tests gate
 * and wrap (`runOffThread`); the engine itself only sees the typed OffThread.
 */
import { db as warehouse } from "@/db";
import type { Db } from "@/db/client";
import type { Caller } from "@/lib/auth/authorize";
import type { Filters } from "../../filters";
import { handleReport as handleRoute } from "../../report-handler";
import type { ReportJson, ReportName } from "../../report-csv-writers";
import type { Scope } from "../../scope";
import { createMemoryEngine } from "./engine";
import { inProcess, processWorker, type OffThread } from "./worker/off-thread";
import type { HeadFirstOrder, ReportAnswerer, StoreValuesOf } from "./report-answerer";
import { REPORT_ANSWERERS } from "./report-answerers";
import { storeValuesOffThread } from "./worker/host";

type Job = "json" | "rows" | "order";

/** A report's answer from the process's worker, or undefined where it runs in-process. */
export function runOffThread<N extends ReportName>(report: ReportAnswerer<N>, job: Job, f: Filters, scope: Scope, signal?: AbortSignal): Promise<unknown> | undefined {
  return job === "json" ? processWorker.json(report, f, scope, signal) : job === "rows" ? processWorker.rows(report, f, scope, signal) : processWorker.order(report, f, scope, signal);
}

export { storeValuesOffThread };

/** A report's JSON the way the production engine answers it: from the worker when one runs. */
export function runReport<N extends ReportName>(name: N, f: Filters, scope: Scope, signal?: AbortSignal): Promise<ReportJson<N>> {
  return createMemoryEngine({ db: warehouse }).report(name, f, scope, signal);
}

interface TestDeps {
  db: () => Db;
  authorize: (request: Request) => Promise<Caller>;
  offThread?: typeof runOffThread;
  storeValues?: (signal?: AbortSignal) => StoreValuesOf | undefined;
}

/** The legacy test seam's untyped answers, as the engine's typed OffThread (the tests hand back what the worker gave). */
function typedOffThread(run: typeof runOffThread, storeValues: TestDeps["storeValues"]): OffThread {
  return {
    json: (report, f, scope, signal) => run(report, "json", f, scope, signal) as ReturnType<OffThread["json"]>,
    rows: (report, f, scope, signal) => run(report, "rows", f, scope, signal) as ReturnType<OffThread["rows"]>,
    order: (report, f, scope, signal) => run(report, "order", f, scope, signal) as Promise<HeadFirstOrder> | undefined,
    storeValues: storeValues ?? (() => undefined),
  };
}

export function handleReport<N extends ReportName>(request: Request, report: ReportAnswerer<N>, deps: TestDeps): Promise<Response> {
  const offThread = deps.offThread ? typedOffThread(deps.offThread, deps.storeValues) : inProcess;
  const engine = createMemoryEngine({ db: deps.db, offThread });
  return handleRoute(request, REPORT_ANSWERERS[report.name].name, { authorize: deps.authorize, engine: () => engine });
}
