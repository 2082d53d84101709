import type { ClickHouseConfig } from "./config";
import { openClickHouse, type ClickHouse } from "./client";
import { clusterHosts, reachAllClusterHosts } from "./cluster-hosts";
import { MIGRATIONS, type Migration } from "./migrations";
import { quoteIdentifier, qualified, type Placement } from "./schema";
import { raw, sql } from "./sql";

/**
 * Creates and migrates the warehouse's ClickHouse schema: at server start and by
 * `npm run db:migrate`. Each host keeps the list of migrations applied to it in its own
 * `callboard_migrations` table (a plain local table: without distributed DDL every host
 * is migrated on its own). With CLICKHOUSE_CLUSTER the hosts are every server (shard and
 * replica) `system.clusters` lists for it, each reached and checked to be that server
 * (cluster-hosts.ts) before any is changed: one that cannot be reached stops the
 * migration with an error naming it and saying how to configure the cluster. Where the
 * cluster has distributed DDL (ZooKeeper), statements run once, ON CLUSTER, from the URL's host.
 */

export const MIGRATIONS_TABLE = "callboard_migrations";

export interface MigrationReport {
  /** The servers migrated (redacted addresses). */
  hosts: string[];
  /** Migrations applied by this run, per host. */
  applied: Array<{ host: string; id: number; name: string }>;
  /** Whether the statements ran ON CLUSTER (distributed DDL). */
  onCluster: boolean;
}

/**
 * Brings one server (or chdb) up to date: the database, the migrations table, then every
 * migration it has not recorded, in order. Returns the ids applied. A migration's data
 * step (`fill`) runs on `fillOn`: this server, or with ON CLUSTER every host of the cluster
 * (each fills its own rows).
 */
export async function applyMigrations(
  ch: ClickHouse,
  p: Placement,
  onCluster = false,
  migrations: readonly Migration[] = MIGRATIONS,
  fillOn: readonly ClickHouse[] = [ch],
): Promise<Migration[]> {
  const on = onCluster && p.cluster ? ` ON CLUSTER ${quoteIdentifier(p.cluster)}` : "";
  await ch.command(`CREATE DATABASE IF NOT EXISTS ${quoteIdentifier(p.database)}${on}`);
  const table = qualified(p.database, MIGRATIONS_TABLE);
  await ch.command(`CREATE TABLE IF NOT EXISTS ${table} (id UInt32, name String, applied_ms UInt64) ENGINE = MergeTree ORDER BY id`);
  const done = new Set((await ch.rows<{ id: number }>(`SELECT DISTINCT id FROM ${table}`)).map((r) => Number(r.id)));
  const applied: Migration[] = [];
  for (const m of migrations) {
    if (done.has(m.id)) continue;
    for (const statement of m.statements(p, onCluster)) {
      if (typeof statement === "string") await ch.command(statement);
      else if ((await ch.rows(statement.doneIf)).length === 0) await ch.command(statement.sql);
    }
    if (m.fill) for (const host of fillOn) await m.fill(host, p);
    await ch.command(sql`INSERT INTO ${raw(table)} (id, name, applied_ms) VALUES (${m.id}, ${m.name}, ${Date.now()})`.text);
    applied.push(m);
  }
  return applied;
}

/** Whether the server's cluster DDL can run ON CLUSTER (it needs ZooKeeper). */
async function hasDistributedDdl(ch: ClickHouse): Promise<boolean> {
  try {
    await ch.rows("SELECT name FROM system.zookeeper WHERE path = '/' LIMIT 1");
    return true;
  } catch {
    return false;
  }
}

/** Migrates the ClickHouse named by the configuration (every host of its cluster). */
export async function migrateClickHouse(c: ClickHouseConfig): Promise<MigrationReport> {
  const boot = openClickHouse(c, { noDatabase: true });
  const p: Placement = { database: c.database, cluster: c.cluster };
  try {
    if (!c.cluster) {
      const applied = await applyMigrations(boot, p);
      return { hosts: [c.redacted], applied: applied.map((m) => ({ host: c.redacted, id: m.id, name: m.name })), onCluster: false };
    }
    const hosts = await clusterHosts(boot, c.cluster);
    if (hosts.length === 0) throw new Error(`CLICKHOUSE_CLUSTER "${c.cluster}" is not a cluster of ${c.redacted} (see its remote_servers)`);
    if (await hasDistributedDdl(boot)) {
      // The statements run once, ON CLUSTER; a data step on every host (its own rows).
      const everyHost = await reachAllClusterHosts(c, c.cluster, hosts);
      try {
        const applied = await applyMigrations(boot, p, true, MIGRATIONS, everyHost.map((h) => h.client));
        return { hosts: [c.redacted], applied: applied.map((m) => ({ host: c.redacted, id: m.id, name: m.name })), onCluster: true };
      } finally {
        await Promise.all(everyHost.map((h) => h.client.close()));
      }
    }
    const reached = await reachAllClusterHosts(c, c.cluster, hosts);
    const report: MigrationReport = { hosts: [], applied: [], onCluster: false };
    try {
      for (const { config, client } of reached) {
        const applied = await applyMigrations(client, p);
        report.hosts.push(config.redacted);
        for (const m of applied) report.applied.push({ host: config.redacted, id: m.id, name: m.name });
      }
    } finally {
      await Promise.all(reached.map((r) => r.client.close()));
    }
    return report;
  } finally {
    await boot.close();
  }
}
