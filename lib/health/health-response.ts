import type { Db } from "@/db/client";
import { env } from "@/lib/config/env";
import { withClickHouseHealth } from "./clickhouse-health";
import { getHealth } from "./health";
import { syncMaxAgeSeconds } from "./sync-age";

/**
 * `GET /api/health`'s answer, the readiness probe (the Next route and the server's lean API
 * path): 200 when the warehouse reads and writes (and, in ClickHouse mode, ClickHouse can
 * be read), 503 otherwise; apps whose syncs are stale are listed either way; never cached.
 * The liveness probe is `/api/health/live` (lib/server/start.ts). In memory mode as in
 * ClickHouse mode: the ClickHouse part (clickhouse-health.ts) is added only in the latter.
 */
export async function healthResponse(open: () => Db): Promise<Response> {
  const health = await withClickHouseHealth(getHealth(open, { syncMaxAgeSeconds: syncMaxAgeSeconds(env()) }), open);
  return Response.json(health, { status: health.status === "ok" ? 200 : 503, headers: { "Cache-Control": "no-store" } });
}
