import { db } from "@/db";
import { rawFromUrl } from "@/app/_ops/params";
import { scopeAppPks } from "@/app/_ops/scope";
import { eventsParamsSchema } from "@/app/events/params";
import { DELIVERY_COLUMNS, deliveryRow } from "@/app/events/rows";
import { authorize } from "@/lib/auth/authorize";
import { respond } from "@/lib/auth/route-support";
import { csvResponse } from "@/lib/export/csv";
import { getRecentDeliveries } from "@/lib/ingest/queries";

export const dynamic = "force-dynamic";

/** GET /api/v1/events/deliveries[?app=…&outcome=rejected&limit=100&format=csv]: newest deliveries, bodies never included. */
export function GET(request: Request): Promise<Response> {
  return respond(async () => {
    // Who asks comes first: an unsigned request is a 401 whatever its parameters.
    const caller = await authorize(request);
    const p = eventsParamsSchema.parse(rawFromUrl(new URL(request.url).searchParams));
    const warehouse = db();
    const appPks = scopeAppPks(warehouse, caller, p.app);
    const rows = getRecentDeliveries(warehouse, appPks, { outcome: p.outcome, limit: p.limit }).map(deliveryRow);
    if (p.format === "csv") return csvResponse("deliveries", rows, DELIVERY_COLUMNS, request.signal);
    return Response.json({ data: rows, meta: { outcome: p.outcome, limit: p.limit } });
  });
}
