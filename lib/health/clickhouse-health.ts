import type { Db } from "@/db/client";
import { analyticsEngine, type AnalyticsEngine } from "@/lib/analytics/engine";
import { getForwardingBacklog } from "@/lib/ingest/forward-backlog";
import { env } from "@/lib/config/env";
import { getHealth, type Health } from "./health";
import { syncMaxAgeSeconds } from "./sync-age";

/**
 * ClickHouse mode's part of `/api/health` (open to anyone: figures only, never an
 * address, a password or an error text): whether the warehouse's ClickHouse can be read
 * (the ClickHouse engine's own health: a read of the facts on every shard, bounded in
 * time), and the webhook facts still waiting in SQLite to be forwarded there.
 */
export interface ClickHouseHealth {
  clickhouse: "ok" | "unreadable";
  /** null when SQLite itself cannot be read (`database` says so). */
  forwarding: {
    /** Deliveries and recordings stored locally, not yet in ClickHouse. */
    pending: number;
    /** Age of the oldest of them in seconds (null: nothing pending). */
    oldestAgeSeconds: number | null;
    /** The last attempt to forward failed (ClickHouse down or refusing); it is retried. */
    failing: boolean;
  } | null;
}

export async function getClickHouseHealth(open: () => Db, engine: Pick<AnalyticsEngine, "health">): Promise<ClickHouseHealth> {
  let forwarding: ClickHouseHealth["forwarding"] = null;
  try {
    const b = getForwardingBacklog(open());
    forwarding = { pending: b.pending, oldestAgeSeconds: b.oldestAgeSeconds, failing: b.failures > 0 };
  } catch {
    /* SQLite unreadable: getHealth reports it */
  }
  return { clickhouse: (await engine.health()).status === "ok" ? "ok" : "unreadable", forwarding };
}

/**
 * The health answer with ClickHouse's part when the process's engine is ClickHouse
 * (CLICKHOUSE_URL; unchanged otherwise): unavailable (503) when ClickHouse cannot be read.
 * A backlog alone does not make the server unhealthy: every delivery in it is stored and
 * will be forwarded.
 */
export async function withClickHouseHealth(health: Health, open: () => Db, engine: AnalyticsEngine = analyticsEngine()): Promise<Health | (Health & ClickHouseHealth)> {
  if (engine.kind !== "clickhouse") return health;
  const part = await getClickHouseHealth(open, engine);
  return { ...health, ...part, status: part.clickhouse === "ok" ? health.status : "unavailable" };
}

/**
 * `GET /api/health`'s answer, the readiness probe (the Next route and the server's lean API
 * path): 200 when the warehouse reads and writes (and, in ClickHouse mode, ClickHouse can
 * be read), 503 otherwise; apps whose syncs are stale are listed either way; never cached.
 * The liveness probe is `/api/health/live` (lib/server/start.ts).
 */
export async function healthResponse(open: () => Db): Promise<Response> {
  const health = await withClickHouseHealth(getHealth(open, { syncMaxAgeSeconds: syncMaxAgeSeconds(env()) }), open);
  return Response.json(health, { status: health.status === "ok" ? 200 : 503, headers: { "Cache-Control": "no-store" } });
}
