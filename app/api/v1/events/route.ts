import { db } from "@/db";
import { rawFromUrl } from "@/lib/ops/params";
import { scopeAppPks } from "@/lib/ops/scope";
import { eventsParamsSchema, eventsWindow } from "@/lib/ops/events-params";
import { csvDownloadName } from "@/lib/analytics/csv-filename";
import { COUNT_COLUMNS, countRow, sortCountRows } from "@/lib/ops/events-rows";
import { authorize } from "@/lib/auth/authorize";
import { respond } from "@/lib/auth/route-support";
import { csvResponse } from "@/lib/export/csv";
import { eventCounts } from "@/lib/analytics/event-counts";

export const dynamic = "force-dynamic";

/** GET /api/v1/events[?app=…&from=…&to=…|days=30&tz=UTC&format=csv]: deliveries per app, trigger and day (no period: all time). */
export function GET(request: Request): Promise<Response> {
  return respond(async () => {
    // Who asks comes first: an unsigned request is a 401 whatever its parameters.
    const caller = await authorize(request);
    const p = eventsParamsSchema.parse(rawFromUrl(new URL(request.url).searchParams));
    const warehouse = db();
    const appPks = await scopeAppPks(warehouse, caller, p.app);
    const { from, to } = eventsWindow(p);
    const rows = sortCountRows((await eventCounts(warehouse, appPks, { from, to, tz: p.tz }, request.signal)).map(countRow));
    if (p.format === "csv") {
      const filename = csvDownloadName("events", { apps: p.app, from: from > 0 ? from : undefined, to, tz: p.tz });
      return csvResponse("events", rows, COUNT_COLUMNS, request.signal, { filename, tz: p.tz });
    }
    return Response.json({ data: rows, meta: { from, to, tz: p.tz, days: p.days } });
  });
}
