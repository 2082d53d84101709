import { db } from "@/db";
import { rawFromUrl } from "@/lib/ops/params";
import { scopeAppPks } from "@/lib/ops/scope";
import { liveParamsSchema, visibleLiveSessions } from "@/lib/ops/live-params";
import { authorize } from "@/lib/auth/authorize";
import { respond } from "@/lib/auth/route-support";
import { getLiveSessions } from "@/lib/ingest/queries";

export const dynamic = "force-dynamic";

/** GET /api/v1/live[?app=…&recent=minutes]: calls and meetings going on now, per the webhooks. */
export function GET(request: Request): Promise<Response> {
  return respond(async () => {
    // Who asks comes first: an unsigned request is a 401 whatever its parameters.
    const caller = await authorize(request);
    const params = liveParamsSchema.parse(rawFromUrl(new URL(request.url).searchParams));
    const warehouse = db();
    const appPks = await scopeAppPks(warehouse, caller, params.app);
    const asOfMs = Date.now();
    const data = visibleLiveSessions(await getLiveSessions(warehouse, appPks, { nowMs: asOfMs, endedWithinMs: params.recent * 60_000 }), params.recent, asOfMs);
    return Response.json({ data, meta: { asOfMs, recentMinutes: params.recent } });
  });
}
