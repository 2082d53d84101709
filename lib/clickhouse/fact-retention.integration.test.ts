import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "@/db/client";
import { tempDbFile } from "@/lib/analytics/test-fixtures";
import { parseEnv } from "@/lib/config/env";
import { startRetentionSchedule } from "@/lib/retention/prune";
import { openClickHouse, type ClickHouse } from "./client";
import { forHost } from "./config";
import { FACT_MONTH_TABLES, firstKeptMonth, pruneFacts, pruneFactServers } from "./fact-retention";
import { applyMigrations, migrateClickHouse } from "./migrate";
import { moveServersToV2, moveToV2 } from "./move-v2";
import { DEFAULT_LEASE_TIMING } from "./move-v2-guards";
import { openChdb } from "./test-chdb";
import { CLICKHOUSE_SKIP_REASON, startClickHouse, type TestClickHouse } from "./test-clickhouse";
import { history } from "./test-move-v2-history";
import { CallWriterV2, openShardsV2 } from "./writer-v2";

/**
 * RETAIN_CALLS_MONTHS (fact-retention.ts) on two real 18.16 shards and on chdb: the history
 * of test-move-v2-history.ts (20 months from 2024-01) moved into v2, then pruned as at
 * 2025-09-15 keeping 6 months (2025-04 on): every fact table and pre-aggregate loses its
 * months before 2025-04 on every shard, call_raw its calls of those months, and the kept
 * months answer exactly as before in every table. Off (0, the default) nothing moves. A
 * call written again into a dropped month is dropped whole by the next run.
 */

const NOW = Date.UTC(2025, 8, 15);
const KEEP = 6;
const FIRST = 202504;

/** Per table, per start month: what a report of that month sums. */
async function figures(ch: ClickHouse, db: string): Promise<Record<string, Array<{ m: number; n: number }>>> {
  const per = (sql: string) => ch.rows<{ m: number; n: number }>(`${sql} HAVING n != 0 ORDER BY m`);
  return {
    calls: await per(`SELECT toYYYYMM(start_at) AS m, sum(sign) AS n FROM ${db}.calls_v2 GROUP BY m`),
    participants: await per(`SELECT toYYYYMM(start_at) AS m, sum(sign) AS n FROM ${db}.participants_v2 GROUP BY m`),
    byBucket: await per(`SELECT toYYYYMM(bucket) AS m, sum(calls) AS n FROM ${db}.calls_by_bucket GROUP BY m`),
    byMonth: await per(`SELECT toYYYYMM(month) AS m, sum(calls) AS n FROM ${db}.calls_by_month GROUP BY m`),
    participantsByMonth: await per(`SELECT toYYYYMM(month) AS m, sum(calls) AS n FROM ${db}.participants_by_month GROUP BY m`),
    callRaw: await per(`SELECT toYYYYMM(toDateTime(s)) AS m, count() AS n FROM (SELECT app_pk, session_id, argMax(start_at, version) AS s FROM ${db}.call_raw GROUP BY app_pk, session_id) GROUP BY m`),
  };
}

/** How many months, the current one included, reach back to `month` (YYYYMM) at `nowMs`: the RETAIN_CALLS_MONTHS that keeps it first. */
function monthsSince(month: number, nowMs: number): number {
  const now = new Date(nowMs);
  return (now.getUTCFullYear() * 12 + now.getUTCMonth()) - (Math.floor(month / 100) * 12 + (month % 100) - 1) + 1;
}

const kept = (f: Awaited<ReturnType<typeof figures>>) => Object.fromEntries(Object.entries(f).map(([k, rows]) => [k, rows.filter((r) => r.m >= FIRST)]));

async function expectPruned(ch: ClickHouse, db: string, before: Awaited<ReturnType<typeof figures>>, servers: readonly ClickHouse[], local: (t: string) => string): Promise<void> {
  const after = await figures(ch, db);
  for (const [table, rows] of Object.entries(after)) expect(rows.filter((r) => r.m < FIRST), table).toEqual([]);
  expect(after).toEqual(kept(before));
  // The reports agree: the rows, the 15-minute and the monthly pre-aggregates count the same calls per month.
  expect(after.byBucket).toEqual(after.calls);
  expect(after.byMonth).toEqual(after.calls);
  expect(after.participantsByMonth.length).toBeGreaterThan(0);
  for (const s of servers) {
    const names = FACT_MONTH_TABLES.map((t) => `'${local(t.name)}'`).join(", ");
    const old = await s.rows(`SELECT DISTINCT table, partition FROM system.parts WHERE database = '${db}' AND active AND table IN (${names}) AND partition < '${FIRST}'`);
    expect(old, s.label).toEqual([]);
  }
}

it("keeps the current month and the ones before it; off (0) by default, and only with ClickHouse", () => {
  expect(firstKeptMonth(6, NOW)).toBe(FIRST);
  expect(firstKeptMonth(1, Date.UTC(2026, 0, 31, 23))).toBe(202601);
  expect(firstKeptMonth(13, Date.UTC(2026, 0, 1))).toBe(202501);
  expect(firstKeptMonth(monthsSince(FIRST, Date.now()), Date.now())).toBe(FIRST);
  expect(parseEnv({ AUTH_SECRET: "x".repeat(32) }).RETAIN_CALLS_MONTHS).toBe(0);
  expect(() => parseEnv({ AUTH_SECRET: "x".repeat(32), RETAIN_CALLS_MONTHS: "6" })).toThrow(/RETAIN_CALLS_MONTHS: needs CLICKHOUSE_URL/);
  expect(parseEnv({ AUTH_SECRET: "x".repeat(32), RETAIN_CALLS_MONTHS: "6", CLICKHOUSE_URL: "http://127.0.0.1:8123/callboard" }).RETAIN_CALLS_MONTHS).toBe(6);
});

describe.skipIf(CLICKHOUSE_SKIP_REASON)("ClickHouse fact retention on two 18.16 shards", () => {
  const db = "callboard_retention_test";
  let cluster: TestClickHouse;
  let ch: ClickHouse;
  const shards: ClickHouse[] = [];

  beforeAll(async () => {
    cluster = await startClickHouse({ shards: 2 });
    await migrateClickHouse(cluster.config(db));
    ch = openClickHouse(cluster.config(db));
    for (const s of cluster.servers) shards.push(openClickHouse(forHost(cluster.config(db), s.host)));
    const rows = history();
    for (let i = 0; i < rows.length; i += 250) await ch.insert("calls", rows.slice(i, i + 250));
    await moveToV2(cluster.config(db), { leaseTiming: { ...DEFAULT_LEASE_TIMING, settleMs: 500 } });
  }, 240_000);
  afterAll(async () => {
    for (const s of shards) await s.close();
    await ch?.close();
    await cluster?.stop();
  }, 240_000); // two shards stopping (and their files removed) on a box whose disk other suites keep busy

  it("drops every month before the kept ones from every table on every shard, and call_raw's calls of them; the kept months answer as before", { timeout: 240_000 }, async () => {
    const before = await figures(ch, db);
    expect(before.calls.filter((r) => r.m < FIRST).length).toBeGreaterThan(10);
    expect(before.calls.filter((r) => r.m >= FIRST).length).toBeGreaterThan(2);
    // Off: nothing changes.
    expect(await pruneFacts(cluster.config(db), 0, { nowMs: NOW })).toEqual({ firstKeptMonth: 0, dropped: [], callRawDeleted: 0 });
    expect(await figures(ch, db)).toEqual(before);

    const report = await pruneFacts(cluster.config(db), KEEP, { nowMs: NOW });
    expect(report.firstKeptMonth).toBe(FIRST);
    expect(new Set(report.dropped.map((d) => d.server)).size).toBe(2);
    expect(report.callRawDeleted).toBe(before.callRaw.filter((r) => r.m < FIRST).reduce((s, r) => s + Number(r.n), 0));
    await expectPruned(ch, db, before, shards, (t) => `${t}_local`);
    // A second run has nothing left to do.
    expect(await pruneFacts(cluster.config(db), KEEP, { nowMs: NOW })).toMatchObject({ dropped: [], callRawDeleted: 0 });
  });

  it("drops a call the sync writes again into a dropped month whole at the next run of the server's retention schedule", { timeout: 120_000 }, async () => {
    const before = await figures(ch, db);
    const writerShards = await openShardsV2(ch, cluster.config(db));
    try {
      const writer = new CallWriterV2(ch, writerShards);
      const [recent] = await ch.rows<{ app_pk: number; session_id: string }>(
        `SELECT app_pk, session_id FROM ${db}.calls_v2 WHERE toYYYYMM(start_at) >= ${FIRST} AND sign = 1 ORDER BY session_id LIMIT 1`,
      );
      const stored = (await writer.lookup(recent.app_pk, [recent.session_id])).get(recent.session_id);
      const old = { ...stored!.state!, sessionId: "refetched-old", version: 1, startAt: Date.UTC(2024, 2, 5) / 1000 };
      await writer.write(recent.app_pk, [{ sessionId: old.sessionId, version: 1, next: old, raw: null }]);
      const back = await figures(ch, db);
      expect(back.calls.filter((r) => r.m === 202403)).toEqual([{ m: 202403, n: 1 }]);
      expect(back.callRaw.filter((r) => r.m === 202403)).toEqual([{ m: 202403, n: 1 }]);
      // The server's retention schedule (lib/retention/prune.ts) runs it, at today's date: keeping as many months as reach back to 2025-04.
      const keepNow = monthsSince(FIRST, Date.now());
      const warehouse = openDatabase(tempDbFile("fact-retention"));
      const stop = startRetentionSchedule(() => warehouse, { auditDays: 0, syncRunsDays: 0, clickHouse: { config: cluster.config(db), keepMonths: keepNow } }, 200);
      try {
        await expect.poll(async () => (await figures(ch, db)).callRaw.filter((r) => r.m < FIRST), { timeout: 30_000, interval: 250 }).toEqual([]);
      } finally {
        stop();
        warehouse.$client.close();
      }
      await expectPruned(ch, db, before, shards, (t) => `${t}_local`);
    } finally {
      await Promise.all(writerShards.filter((x) => x.client !== ch).map((x) => x.client.close()));
    }
  });
});

describe("ClickHouse fact retention on chdb (a current ClickHouse)", () => {
  it("prunes the same history the same way", { timeout: 120_000 }, async () => {
    const ch = openChdb("callboard_retention_chdb");
    try {
      await applyMigrations(ch, ch.placement);
      await ch.insert("calls", history());
      await moveServersToV2([ch], ch.placement, "chdb", { leaseTiming: { ...DEFAULT_LEASE_TIMING, settleMs: 200 } });
      const db = ch.placement.database;
      const before = await figures(ch, db);
      expect(await pruneFactServers([ch], ch.placement, 0, { nowMs: NOW })).toMatchObject({ dropped: [] });
      const report = await pruneFactServers([ch], ch.placement, KEEP, { nowMs: NOW });
      expect(report.dropped.length).toBeGreaterThan(10);
      await expectPruned(ch, db, before, [ch], (t) => t);
    } finally {
      await ch.close();
    }
  });
});
