import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openClickHouse, type ClickHouse } from "./client";
import { forHost } from "./config";
import { CONCURRENCY_FILL_CHECKPOINTS_TABLE } from "./concurrency-by-quarter-fill";
import { migrateClickHouse, MIGRATIONS_TABLE } from "./migrate";
import { migration0011 } from "./migrations/0011_concurrency_by_quarter";
import type { CallStateV2 } from "./rows-v2";
import type { Placement } from "./schema";
import { CLICKHOUSE_SKIP_REASON, startClickHouse, type TestClickHouse } from "./test-clickhouse";
import { CallWriterV2, openShardsV2, type CallChangeV2 } from "./writer-v2";

/**
 * ClickHouse migration 0011 on two 18.16 shards: concurrency_by_quarter and its view. On a
 * new warehouse the view keeps it from the first write; on a warehouse whose calls were
 * stored before 0011, the fill builds every shard's table from its call rows as the view
 * would have (compared with what the view built from the same writes) — cancel rows of a
 * call whose start moved across a month and whose end changed, a delete, an ongoing call,
 * calls running past a month's end — and a run killed half way (a month half written
 * again, its checkpoint lost) ends the same.
 */

const DB = "callboard_concurrency_fill_test";
const APP = 7;
const JAN = Date.UTC(2026, 0, 31, 23, 50) / 1000;
const FEB = Date.UTC(2026, 1, 1, 0, 20) / 1000;

const call = (sessionId: string, more: Partial<CallStateV2> = {}): CallStateV2 => ({
  appPk: APP, sessionId, version: 0, startAt: JAN, startedAt: JAN, endedAt: JAN + 3600, type: "audio", mode: "call", status: "ended", receiverType: "user",
  platformHasRecording: false, audioX1000: 1_000, videoX1000: 0, durationX1000: 1_000, durationSeconds: 3600,
  firstSeenMs: 1, arrival: 1, source: "sync", contentHash: null, participants: [],
  ...more,
});

/** Calls on both sides of January's end, some running into February (one for days). */
const FIRST = Array.from({ length: 12 }, (_, i) => {
  const start = i % 2 ? FEB + i * 600 : JAN - i * 900;
  return call(`c-${i}`, { startAt: start, startedAt: start, endedAt: start + (i === 4 ? 5 * 86_400 : 600 * (i + 1)), type: i % 3 ? "audio" : "video" });
});
/** A start moved into February with a later end, a delete, an end changed, a call still ongoing. */
const NEXT: Array<[string, CallStateV2 | undefined]> = [
  ["c-0", call("c-0", { startAt: FEB + 5, startedAt: FEB + 5, endedAt: FEB + 7_200 })],
  ["c-2", undefined],
  ["c-3", call("c-3", { startAt: FEB + 1800, startedAt: FEB + 1800, endedAt: FEB + 40_000 })],
  ["c-ongoing", call("c-ongoing", { startAt: JAN - 60, startedAt: JAN - 60, endedAt: null, status: "ongoing" })],
];

const changes = (pairs: ReadonlyArray<[string, CallStateV2 | undefined]>, version: number): CallChangeV2[] =>
  pairs.map(([sessionId, next]) => ({ sessionId, version, next, raw: next ? "{}" : null }));

describe.skipIf(CLICKHOUSE_SKIP_REASON)("migration 0011: concurrency_by_quarter, kept by its view and filled for stored calls", () => {
  let cluster: TestClickHouse;
  let ch: ClickHouse;
  let writer: CallWriterV2;
  let closeWriter: () => Promise<void>;
  const shards: ClickHouse[] = [];
  const p: Placement = { database: DB, cluster: undefined };

  /** Per shard: its pre-aggregate's non-zero sums per (app, quarter, type, start month), in one order. */
  const aggregates = async () => {
    const out: unknown[][] = [];
    for (const s of shards) {
      out.push(await s.rows(`SELECT app_pk, toUInt32(quarter) AS q, toString(type) AS t, month, sum(starts) AS starts, sum(running) AS running, sum(last) AS last
        FROM ${DB}.concurrency_by_quarter_local GROUP BY app_pk, q, t, month HAVING starts != 0 OR running != 0 OR last != 0 ORDER BY app_pk, q, t, month`));
    }
    return out;
  };

  beforeAll(async () => {
    cluster = await startClickHouse({ shards: 2 });
    p.cluster = cluster.cluster;
    ch = openClickHouse(cluster.config(DB));
    for (const s of cluster.servers) shards.push(openClickHouse(forHost(cluster.config(DB), s.host)));
    await migrateClickHouse(cluster.config(DB));
    const writerShards = await openShardsV2(ch, cluster.config(DB));
    writer = new CallWriterV2(ch, writerShards);
    closeWriter = async () => {
      for (const s of writerShards) if (s.client !== ch) await s.client.close();
    };
    await writer.write(APP, changes(FIRST.map((s) => [s.sessionId, s]), 10));
    await writer.write(APP, changes(NEXT, 20));
  }, 180_000);
  afterAll(async () => {
    await closeWriter?.();
    for (const s of shards) await s.close();
    await ch?.close();
    await cluster?.stop();
  }, 120_000);

  it("fills every shard's table as its view builds it, and again after a crash", { timeout: 300_000 }, async () => {
    // A new warehouse: 0011 created the table and view, which kept it from the first write.
    const byView = await aggregates();
    for (const rows of byView) expect(rows.length).toBeGreaterThan(1);
    // What the fixture must show: the long call running at February's quarters, the ongoing one never running, the delete gone.
    const all = byView.flat() as Array<{ q: number; starts: number; running: number; last: number }>;
    const feb3 = Date.UTC(2026, 1, 3) / 1000;
    expect(all.filter((r) => Number(r.q) === feb3).reduce((s, r) => s + Number(r.running), 0)).toBe(1);
    expect(all.reduce((s, r) => s + Number(r.starts), 0)).toBe(12);
    expect(all.reduce((s, r) => s + Number(r.last), 0)).toBe(12);

    // The warehouse as it was before 0011: no table, no view, 0011 not recorded.
    for (const s of shards) {
      for (const t of ["concurrency_by_quarter_mv_local", "concurrency_by_quarter", "concurrency_by_quarter_local"]) await s.command(`DROP TABLE ${DB}.${t}`);
      await s.command(`ALTER TABLE ${DB}.${MIGRATIONS_TABLE} DELETE WHERE id = 11`);
    }
    await waitForMutations(shards);
    const report = await migrateClickHouse(cluster.config(DB));
    expect(report.applied.filter((a) => a.id === 11)).toHaveLength(2);
    expect(await aggregates()).toEqual(byView);

    // Later writes go through the view.
    await writer.write(APP, changes([["c-5", call("c-5", { startAt: FEB + 90, startedAt: FEB + 90, endedAt: FEB + 9_000 })], ["c-6", undefined]], 30));
    const later = await aggregates();
    expect(later).not.toEqual(byView);

    // A crash half way: 0011 not recorded, February's checkpoint lost and February half written again.
    for (const s of shards) {
      await s.command(`ALTER TABLE ${DB}.${MIGRATIONS_TABLE} DELETE WHERE id = 11`);
      await s.command(`ALTER TABLE ${DB}.${CONCURRENCY_FILL_CHECKPOINTS_TABLE} DELETE WHERE month = 202602`);
      await s.command(`INSERT INTO ${DB}.concurrency_by_quarter_local SELECT * FROM ${DB}.concurrency_by_quarter_local WHERE toYYYYMM(month) = 202602 LIMIT 3`);
    }
    await waitForMutations(shards);
    expect(await aggregates()).not.toEqual(later);
    const again = await migrateClickHouse(cluster.config(DB));
    expect(again.applied.filter((a) => a.id === 11)).toHaveLength(2);
    expect(await aggregates()).toEqual(later);
    // Run once more by itself (every month checkpointed): nothing filled, nothing changed.
    for (const s of shards) expect(await migration0011.fill(s, p)).toEqual([]);
    expect(await aggregates()).toEqual(later);
  });
});

/** Waits for the mutations (ALTER … DELETE) of every shard to be done. */
async function waitForMutations(shards: readonly ClickHouse[]): Promise<void> {
  for (const s of shards) {
    for (let i = 0; ; i++) {
      const [left] = await s.rows<{ n: number }>(`SELECT count() AS n FROM system.mutations WHERE database = '${DB}' AND is_done = 0`);
      if (Number(left.n) === 0) break;
      if (i > 200) throw new Error("mutations not done");
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
