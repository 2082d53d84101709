import { db } from "@/db";
import { rawFromUrl } from "@/lib/ops/params";
import { scopeAppPks } from "@/lib/ops/scope";
import { eventsParamsSchema } from "@/lib/ops/events-params";
import { DELIVERY_COLUMNS, deliveryRow } from "@/lib/ops/events-rows";
import { authorize } from "@/lib/auth/authorize";
import { respond } from "@/lib/auth/route-support";
import { csvDownloadName } from "@/lib/analytics/csv-filename";
import { csvResponse } from "@/lib/export/csv";
import { getRecentDeliveries } from "@/lib/ingest/queries";

export const dynamic = "force-dynamic";

/** GET /api/v1/events/deliveries[?app=…&outcome=rejected&limit=100&tz=UTC&format=csv]: newest deliveries (times in `tz`), bodies never included. */
export function GET(request: Request): Promise<Response> {
  return respond(async () => {
    // Who asks comes first: an unsigned request is a 401 whatever its parameters.
    const caller = await authorize(request);
    const p = eventsParamsSchema.parse(rawFromUrl(new URL(request.url).searchParams));
    const warehouse = db();
    const appPks = await scopeAppPks(warehouse, caller, p.app);
    const rows = (await getRecentDeliveries(warehouse, appPks, { outcome: p.outcome, limit: p.limit })).map((d) => deliveryRow(d, p.tz));
    if (p.format === "csv") {
      // No period: the newest deliveries as of today.
      const filename = csvDownloadName(`deliveries-${p.outcome}-newest-${p.limit}`, { apps: p.app, tz: p.tz }, new Date(), { range: false });
      return csvResponse("deliveries", rows, DELIVERY_COLUMNS, request.signal, { filename });
    }
    return Response.json({ data: rows, meta: { outcome: p.outcome, limit: p.limit } });
  });
}
