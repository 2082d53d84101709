import { randomUUID } from "node:crypto";
import type { ClickHouse } from "./client";
import type { ClickHouseConfig } from "./config";
import { openClickHouse } from "./client";
import { clusterHosts, reachAllClusterHosts } from "./cluster-hosts";
import { localName, qualified, quoteIdentifier, type Placement } from "./schema";
import { CALL_RAW, CALLS_BY_BUCKET, CALLS_BY_MONTH, CALLS_V2, CONCURRENCY_BY_QUARTER, PARTICIPANTS_BY_MONTH, PARTICIPANTS_BY_MONTH_DIMS, PARTICIPANTS_V2 } from "./schema-v2";
import { sql } from "./sql";

/**
 * Retention of the call facts in ClickHouse (issue 27 item 10, RETAIN_CALLS_MONTHS;
 * docs/decisions/0046-clickhouse-fact-retention.md). ClickHouse 18.16 has no TTL, so the
 * server's hourly retention (lib/retention/prune.ts) does what a TTL would, by whole months:
 *   1. on every server, every monthly partition older than the first kept month is dropped
 *      from each table partitioned by start month: the signed rows of calls and participants
 *      and the three pre-aggregates (a state's +1 row and the -1 row that cancels it share
 *      their start month, so a month goes whole and the sums of the months kept do not move);
 *   2. on every server, the `call_raw` rows of the calls whose newest version starts before
 *      that month are deleted (a mutation on 18.16, waited for within a bound), so a writer
 *      finds no state of theirs to cancel.
 * A call the sync fetches again into a dropped month is written as a new call (its rows and
 * `call_raw` row are all in that month) and dropped whole again by the next run: the months
 * before the first kept one may briefly show such calls, never half of one.
 * Uid codes (`uids`) stay: a few bytes per person, and what a kept month needs too.
 */

/** The tables whose partitions are start months (PARTITION BY toYYYYMM(start_at / bucket / month); concurrency_by_quarter by its calls' start month). */
export const FACT_MONTH_TABLES = [CALLS_V2, PARTICIPANTS_V2, CALLS_BY_BUCKET, CALLS_BY_MONTH, PARTICIPANTS_BY_MONTH, PARTICIPANTS_BY_MONTH_DIMS, CONCURRENCY_BY_QUARTER] as const;

/** The default bound of one statement of a prune (the call_raw mutation waits on every part it rewrites). */
export const DEFAULT_FACT_PRUNE_TIMEOUT_MS = 600_000;

/** The first month kept (YYYYMM) when `keepMonths` are kept at `nowMs`: the current UTC month and the `keepMonths - 1` before it. */
export function firstKeptMonth(keepMonths: number, nowMs: number): number {
  const now = new Date(nowMs);
  const first = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - (keepMonths - 1), 1));
  return first.getUTCFullYear() * 100 + first.getUTCMonth() + 1;
}

/** A statement of the prune that did not end within its bound: names the server and what it waited for. */
export class FactPruneStalledError extends Error {
  constructor(readonly server: string, readonly what: string, readonly timeoutMs: number) {
    super(`ClickHouse retention (RETAIN_CALLS_MONTHS) stopped: ${server} did not finish ${what} within ${timeoutMs / 1000} s; it is tried again at the next run`);
    this.name = "FactPruneStalledError";
  }
}

export interface FactPruneReport {
  /** Nothing before this month (YYYYMM) is kept; 0 when retention is off. */
  firstKeptMonth: number;
  /** Partitions dropped, per server and table. */
  dropped: Array<{ server: string; table: string; month: number }>;
  /** call_raw rows deleted, over every server. */
  callRawDeleted: number;
}

export interface FactPruneOptions {
  nowMs?: number;
  /** The most one statement (a mutation's wait included) may take, ms. */
  timeoutMs?: number;
}

async function within<T>(server: ClickHouse, what: string, timeoutMs: number, run: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new FactPruneStalledError(server.label, what, timeoutMs)), timeoutMs);
    timer.unref();
  });
  try {
    return await Promise.race([run(), stalled]);
  } finally {
    clearTimeout(timer);
  }
}

/** Prunes the facts of `servers` (every server of the cluster, or the one) older than `keepMonths` (0: keeps everything). */
export async function pruneFactServers(servers: readonly ClickHouse[], p: Placement, keepMonths: number, options: FactPruneOptions = {}): Promise<FactPruneReport> {
  if (keepMonths <= 0) return { firstKeptMonth: 0, dropped: [], callRawDeleted: 0 };
  const timeoutMs = options.timeoutMs ?? DEFAULT_FACT_PRUNE_TIMEOUT_MS;
  const first = firstKeptMonth(keepMonths, options.nowMs ?? Date.now());
  const firstEpoch = Date.UTC(Math.floor(first / 100), (first % 100) - 1, 1) / 1000;
  const local = (name: string) => localName(p, name);
  const report: FactPruneReport = { firstKeptMonth: first, dropped: [], callRawDeleted: 0 };
  for (const server of servers) {
    const names = FACT_MONTH_TABLES.map((t) => local(t.name));
    const parts = await within(server, "listing its partitions", timeoutMs, () =>
      server.rows<{ table: string; partition: string }>(
        sql`SELECT DISTINCT table, partition FROM system.parts WHERE database = ${p.database} AND active AND table IN ${names} ORDER BY table, partition`.text,
      ),
    );
    for (const { table, partition } of parts) {
      // Every partition of these tables is a YYYYMM; anything else is not ours to drop.
      if (!/^\d{6}$/.test(partition) || Number(partition) >= first) continue;
      const drop = `ALTER TABLE ${qualified(p.database, table)} DROP PARTITION ${partition}`;
      await within(server, drop, timeoutMs, () => server.command(drop));
      report.dropped.push({ server: server.label, table, month: Number(partition) });
    }
    // The calls whose newest version starts before the first kept month (all of a call's rows are on its shard).
    const rawTable = qualified(p.database, local(CALL_RAW.name));
    const oldCalls = `(app_pk, session_id) IN (SELECT app_pk, session_id FROM ${rawTable} GROUP BY app_pk, session_id HAVING argMax(start_at, version) < ${firstEpoch})`;
    const [old] = await within(server, `counting old ${CALL_RAW.name} rows`, timeoutMs, () => server.rows<{ n: number }>(`SELECT count() AS n FROM ${rawTable} WHERE ${oldCalls}`));
    const count = Number(old?.n ?? 0);
    if (count === 0) continue;
    const mutation = `ALTER TABLE ${rawTable} DELETE WHERE ${oldCalls}`;
    await within(server, mutation, timeoutMs, async () => {
      await server.command(mutation, undefined, `callboard-retention-${randomUUID()}`);
      // A mutation runs in the background on 18.16: wait until this table has none left undone.
      for (;;) {
        const [left] = await server.rows<{ n: number }>(
          sql`SELECT count() AS n FROM system.mutations WHERE database = ${p.database} AND table = ${local(CALL_RAW.name)} AND is_done = 0`.text,
        );
        if (Number(left?.n ?? 0) === 0) return;
        await new Promise((r) => setTimeout(r, 250));
      }
    });
    report.callRawDeleted += count;
  }
  return report;
}

/** Prunes the ClickHouse named by the configuration (every server of its cluster). */
export async function pruneFacts(c: ClickHouseConfig, keepMonths: number, options: FactPruneOptions = {}): Promise<FactPruneReport> {
  if (keepMonths <= 0) return { firstKeptMonth: 0, dropped: [], callRawDeleted: 0 };
  const p: Placement = { database: c.database, cluster: c.cluster };
  const open = { requestTimeoutMs: (options.timeoutMs ?? DEFAULT_FACT_PRUNE_TIMEOUT_MS) + 60_000 };
  const boot = openClickHouse(c, open);
  try {
    if (!c.cluster) return await pruneFactServers([boot], p, keepMonths, options);
    const reached = await reachAllClusterHosts(c, c.cluster, await clusterHosts(boot, c.cluster), open);
    try {
      return await pruneFactServers(reached.map((r) => r.client), p, keepMonths, options);
    } finally {
      await Promise.all(reached.map((r) => r.client.close()));
    }
  } finally {
    await boot.close();
  }
}

/** For a log line: the tables a prune dropped months from. */
export function describePrune(r: FactPruneReport): string {
  const tables = [...new Set(r.dropped.map((d) => quoteIdentifier(d.table)))].join(", ");
  return `kept from ${r.firstKeptMonth}: ${r.dropped.length} partitions dropped (${tables || "none"}), ${r.callRawDeleted} call_raw rows deleted`;
}
