import type { Db } from "@/db/client";
import { env } from "@/lib/config/env";
import { POSTGRES_RETRY_AFTER_SECONDS } from "@/lib/postgres/unavailable";
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
  const health = await withClickHouseHealth(await getHealth(open, { syncMaxAgeSeconds: syncMaxAgeSeconds(env()) }), open);
  const headers: Record<string, string> = { "Cache-Control": "no-store" };
  // A state store that cannot be read is down for a moment (Postgres restarting): ask again soon.
  if (health.database === "unreadable") headers["Retry-After"] = String(POSTGRES_RETRY_AFTER_SECONDS);
  return Response.json(health, { status: health.status === "ok" ? 200 : 503, headers });
}
