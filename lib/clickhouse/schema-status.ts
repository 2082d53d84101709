import type { ClickHouseConfig } from "./config";
import { openClickHouse } from "./client";
import { ClusterHostUnreachableError, clusterHosts, reachClusterHost, type ClusterHost } from "./cluster-hosts";
import { MIGRATIONS_TABLE } from "./migrate";
import { MIGRATED_TABLES, MIGRATIONS } from "./migrations";
import { localName, qualified, type Placement } from "./schema";
import { sql } from "./sql";

/**
 * Whether every server of CLICKHOUSE_CLUSTER holds the warehouse's tables: `/api/health`
 * names a shard without them (created by hand, added to remote_servers after the last
 * migration, or unreachable to the migration), instead of leaving the first sync or report
 * to fail with "There is no table … on server …". Figures only: no address, no error text
 * (the health route is open).
 */

export type ShardTablesState =
  /** Every migration recorded, every table there. */
  | "ok"
  /** Reached, but some table or migration is missing: run `npm run db:migrate`. */
  | "missing"
  /** Nothing answers at its host on CLICKHOUSE_URL's port, or another server does. */
  | "unreachable";

export interface ShardTables {
  shard: number;
  replica: number;
  tables: ShardTablesState;
}

async function stateOf(c: ClickHouseConfig, cluster: string, h: ClusterHost, signal?: AbortSignal): Promise<ShardTablesState> {
  let reached;
  try {
    reached = await reachClusterHost(c, cluster, h, { signal, requestTimeoutMs: 5_000 });
  } catch (err) {
    if (err instanceof ClusterHostUnreachableError) return "unreachable";
    throw err;
  }
  const p: Placement = { database: c.database, cluster };
  try {
    const expected = [...MIGRATED_TABLES.map((t) => localName(p, t)), MIGRATIONS_TABLE];
    const tables = await reached.client.rows<{ name: string }>(sql`SELECT name FROM system.tables WHERE database = ${c.database} AND name IN ${expected}`.text, signal);
    const present = new Set(tables.map((t) => t.name));
    if (!expected.every((t) => present.has(t))) return "missing";
    const ids = await reached.client.rows<{ id: number }>(`SELECT DISTINCT id FROM ${qualified(c.database, MIGRATIONS_TABLE)}`, signal);
    const done = new Set(ids.map((r) => Number(r.id)));
    return MIGRATIONS.every((m) => done.has(m.id)) ? "ok" : "missing";
  } finally {
    await reached.client.close();
  }
}

/**
 * Every server of the cluster with the state of its tables, by shard then replica;
 * undefined without CLICKHOUSE_CLUSTER. Throws when the URL's own server cannot be read.
 */
export async function clusterSchemaStatus(c: ClickHouseConfig, signal?: AbortSignal): Promise<ShardTables[] | undefined> {
  const cluster = c.cluster;
  if (!cluster) return undefined;
  const boot = openClickHouse(c, { noDatabase: true, requestTimeoutMs: 5_000 });
  let hosts: ClusterHost[];
  try {
    hosts = await clusterHosts(boot, cluster);
  } finally {
    await boot.close();
  }
  return Promise.all(hosts.map(async (h) => ({ shard: h.shard, replica: h.replica, tables: await stateOf(c, cluster, h, signal) })));
}
