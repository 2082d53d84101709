import type { Db } from "@/db/client";
import { analyticsEngine, type AnalyticsEngine } from "@/lib/analytics/engine";
import { clickHouseConfig, type ClickHouseConfig } from "@/lib/clickhouse";
import { clusterSchemaStatus, type ShardTables } from "@/lib/clickhouse/schema-status";
import { readForwardingBacklog } from "@/lib/ingest/forward-backlog";
import type { Health } from "./health";

/**
 * ClickHouse mode's part of `/api/health` (open to anyone: figures only, never an
 * address, a password or an error text): whether the warehouse's ClickHouse can be read
 * (the ClickHouse engine's own health: a read of the facts on every shard, bounded in
 * time), with CLICKHOUSE_CLUSTER whether every shard holds the warehouse's tables, and
 * the webhook facts still waiting in SQLite to be forwarded there.
 */
export interface ClickHouseHealth {
  /** "unreadable" too when a shard lacks its tables: reports and writes that reach it fail. */
  clickhouse: "ok" | "unreadable";
  /**
   * With CLICKHOUSE_CLUSTER: every server `system.clusters` lists, by shard and replica,
   * and whether its tables are there ("ok", "missing": run `npm run db:migrate`,
   * "unreachable": see the migration's error for how to configure it). null when the
   * cluster cannot be listed; absent on one server.
   */
  shards?: ShardTables[] | null;
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

/** The shards must answer within this too (health is bounded in time). */
const SHARDS_TIMEOUT_MS = 3_000;

async function shardsOf(config: ClickHouseConfig | undefined): Promise<ShardTables[] | null | undefined> {
  if (!config?.cluster) return undefined;
  try {
    return (await clusterSchemaStatus(config, AbortSignal.timeout(SHARDS_TIMEOUT_MS))) ?? null;
  } catch {
    return null;
  }
}

export async function getClickHouseHealth(open: () => Db, engine: Pick<AnalyticsEngine, "health">, config: ClickHouseConfig | undefined = clickHouseConfig()): Promise<ClickHouseHealth> {
  const shards = shardsOf(config);
  let forwarding: ClickHouseHealth["forwarding"] = null;
  try {
    const b = await readForwardingBacklog(open());
    forwarding = { pending: b.pending, oldestAgeSeconds: b.oldestAgeSeconds, failing: b.failures > 0 };
  } catch {
    /* the state store unreadable: getHealth reports it */
  }
  const readable = (await engine.health()).status === "ok";
  const perShard = await shards;
  if (perShard === undefined) return { clickhouse: readable ? "ok" : "unreadable", forwarding };
  const everyShard = perShard !== null && perShard.every((s) => s.tables === "ok");
  return { clickhouse: readable && everyShard ? "ok" : "unreadable", shards: perShard, forwarding };
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
