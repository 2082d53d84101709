import type { Db } from "@/db/client";
import { clickhouse, clickHouseConfigured, type ClickHouse } from "@/lib/clickhouse/client";
import { ensureClickHouseSchema } from "@/lib/clickhouse/ensure";
import { qualified } from "@/lib/clickhouse/schema";
import { getForwardingBacklog } from "@/lib/ingest/forward-backlog";
import type { Health } from "./health";

/**
 * ClickHouse mode's part of `/api/health` (open to anyone: figures only, never an
 * address, a password or an error text): whether the warehouse's ClickHouse can be read,
 * and the webhook facts still waiting in SQLite to be forwarded there.
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

/** ClickHouse must answer a read within this, or it counts as unreadable. */
const READ_TIMEOUT_MS = 3_000;

async function readable(ch: ClickHouse): Promise<boolean> {
  const signal = AbortSignal.timeout(READ_TIMEOUT_MS);
  try {
    const timedOut = new Promise<never>((_, reject) => signal.addEventListener("abort", () => reject(new Error("timeout")), { once: true }));
    await Promise.race([ensureClickHouseSchema(), timedOut]);
    // A real read of the facts (every shard of a cluster answers it), not only a ping.
    await ch.rows(`SELECT 1 FROM ${qualified(ch.placement.database, "calls")} LIMIT 1`, signal);
    return true;
  } catch {
    return false;
  }
}

export async function getClickHouseHealth(open: () => Db, ch: ClickHouse): Promise<ClickHouseHealth> {
  let forwarding: ClickHouseHealth["forwarding"] = null;
  try {
    const b = getForwardingBacklog(open());
    forwarding = { pending: b.pending, oldestAgeSeconds: b.oldestAgeSeconds, failing: b.failures > 0 };
  } catch {
    /* SQLite unreadable: getHealth reports it */
  }
  return { clickhouse: (await readable(ch)) ? "ok" : "unreadable", forwarding };
}

/**
 * The health answer with ClickHouse's part when CLICKHOUSE_URL is set (unchanged
 * otherwise): unavailable (503) when ClickHouse cannot be read. A backlog alone does not
 * make the server unhealthy: every delivery in it is stored and will be forwarded.
 */
export async function withClickHouseHealth(health: Health, open: () => Db): Promise<Health | (Health & ClickHouseHealth)> {
  if (!clickHouseConfigured()) return health;
  const part = await getClickHouseHealth(open, clickhouse());
  return { ...health, ...part, status: part.clickhouse === "ok" ? health.status : "unavailable" };
}
