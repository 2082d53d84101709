import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openClickHouse, type ClickHouse } from "./client";
import { forHost } from "./config";
import { migrateClickHouse, MIGRATIONS_TABLE } from "./migrate";
import { migration0012 } from "./migrations/0012_participants_by_month_dims";
import { BY_MONTH_DIMS_FILL_CHECKPOINTS_TABLE } from "./participants-by-month-fill";
import type { CallStateV2 } from "./rows-v2";
import type { Placement } from "./schema";
import { CLICKHOUSE_SKIP_REASON, startClickHouse, type TestClickHouse } from "./test-clickhouse";
import { CallWriterV2, openShardsV2, type CallChangeV2 } from "./writer-v2";

/**
 * ClickHouse migration 0012 on two 18.16 shards: participants_by_month_dims (per app, uid,
 * month and the call's closed sets). On a new warehouse its view keeps it from the first
 * write; on a warehouse with participant rows written before it (the table and view
 * dropped, rows written meanwhile), the migration sums every shard's months from its own
 * rows; a run killed half way (a month's checkpoint missing, that month half written
 * again) ends the same. "The same": every shard's table equals the signed sums of its
 * participant rows per app, uid, month, type, mode, status and receiver type — including a
 * call whose type changed, one moved across a month and a delete.
 */

const DB = "callboard_by_month_dims_test";
const APP = 7;
const JAN = Date.UTC(2026, 0, 31, 23, 50) / 1000;
const FEB = Date.UTC(2026, 1, 1, 0, 20) / 1000;

const part = (seq: number, uid: string, joined: boolean, state: string) => ({ seq, uid, isJoined: joined, state, audioX1000: seq * 100, videoX1000: 7, durationX1000: seq * 100 + 7 });
const call = (sessionId: string, more: Partial<CallStateV2> = {}): CallStateV2 => ({
  appPk: APP, sessionId, version: 0, startAt: JAN, type: "audio", mode: "call", status: "ended", receiverType: "user",
  platformHasRecording: false, audioX1000: 1_000, videoX1000: 0, durationX1000: 1_000, durationSeconds: 60,
  firstSeenMs: 1, arrival: 1, source: "sync", contentHash: null,
  participants: [part(1, "ann", false, "unanswered"), part(2, "ann", true, "ended"), part(3, "bob", false, "unanswered"), part(4, "ann", true, "ended")],
  ...more,
});

/** Both types, both modes (receiver type with them), two statuses, two months: one uid spreads over several combinations. */
const FIRST = Array.from({ length: 16 }, (_, i) =>
  call(`c-${i}`, {
    startAt: i % 2 ? FEB + i : JAN - i,
    type: i % 4 < 2 ? "audio" : "video",
    mode: i % 3 === 0 ? "meet" : "call",
    receiverType: i % 3 === 0 ? "group" : "user",
    status: i % 5 === 0 ? "missed" : "ended",
  }),
);
/** A call's type changed (audio → video), a start moved from January to February, a delete. */
const NEXT: Array<[string, CallStateV2 | undefined]> = [
  ["c-0", call("c-0", { type: "video", mode: "meet", receiverType: "group", participants: [part(1, "cy", true, "ended"), part(2, "ann", false, "unanswered")] })],
  ["c-2", undefined],
  ["c-4", call("c-4", { startAt: FEB + 4, type: "video", participants: [part(1, "bob", true, "ended")] })],
];

const changes = (pairs: ReadonlyArray<[string, CallStateV2 | undefined]>, version: number): CallChangeV2[] =>
  pairs.map(([sessionId, next]) => ({ sessionId, version, next, raw: next ? "{}" : null }));

const DIMS = "type, type_other, mode, mode_other, status, status_other, receiver_type, receiver_type_other";

describe.skipIf(CLICKHOUSE_SKIP_REASON)("migration 0012: participants_by_month_dims", () => {
  let cluster: TestClickHouse;
  let ch: ClickHouse;
  let writer: CallWriterV2;
  let closeWriter: () => Promise<void>;
  const shards: ClickHouse[] = [];
  const p: Placement = { database: DB, cluster: undefined };

  /** Per shard: the signed sums of its participant rows, and its pre-aggregate, per (app, uid, month, closed sets); non-zero groups, one order. */
  const truthAndAggregate = async () => {
    const out: Array<{ truth: unknown[]; aggregate: unknown[] }> = [];
    const group = `app_pk, uid_code, month, ${DIMS}`;
    const nonZero = `HAVING calls != 0 OR joined != 0 OR unanswered != 0 OR ax != 0 OR vx != 0 OR tx != 0 ORDER BY ${group}`;
    const keys = `app_pk, toString(uid_code) AS uid, ${DIMS.split(", ").map((c) => `toString(${c}) AS d_${c}`).join(", ")}`;
    for (const s of shards) {
      const truth = await s.rows(`SELECT ${keys}, toStartOfMonth(start_at) AS month, sum(sign * first_of_uid) AS calls,
          sum(sign * first_joined_of_uid) AS joined, sum(sign * first_unanswered_of_uid) AS unanswered, sum(sign * total_audio_minutes_x1000) AS ax,
          sum(sign * total_video_minutes_x1000) AS vx, sum(sign * total_duration_minutes_x1000) AS tx
        FROM ${DB}.participants_v2_local GROUP BY ${group} ${nonZero}`);
      const aggregate = await s.rows(`SELECT ${keys}, month, sum(calls) AS calls, sum(joined) AS joined, sum(unanswered) AS unanswered,
          sum(total_audio_minutes_x1000) AS ax, sum(total_video_minutes_x1000) AS vx, sum(total_duration_minutes_x1000) AS tx
        FROM ${DB}.participants_by_month_dims_local GROUP BY ${group} ${nonZero}`);
      out.push({ truth, aggregate });
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

  it("keeps every shard's table with its view, sums the rows written before it, and again after a crash", { timeout: 300_000 }, async () => {
    // A new warehouse: 0012 created the table and view, which kept it from the first write.
    let state = await truthAndAggregate();
    for (const { truth, aggregate } of state) {
      expect(truth.length).toBeGreaterThan(4);
      expect(aggregate).toEqual(truth);
    }
    // A uid over several combinations of one month, and the changed call counted under its new type only.
    const all = state.flatMap((s) => s.truth) as Array<Record<string, string | number>>;
    expect(new Set(all.filter((r) => r.d_type === "video").map((r) => r.uid)).size).toBeGreaterThan(1);

    // A warehouse from before 0012: no table, no view, 0012 not recorded; rows written meanwhile.
    for (const s of shards) {
      for (const t of ["participants_by_month_dims_mv_local", "participants_by_month_dims", "participants_by_month_dims_local", BY_MONTH_DIMS_FILL_CHECKPOINTS_TABLE]) await s.command(`DROP TABLE IF EXISTS ${DB}.${t}`);
      await s.command(`ALTER TABLE ${DB}.${MIGRATIONS_TABLE} DELETE WHERE id = 12`);
    }
    await waitForMutations(shards);
    await writer.write(APP, changes([["c-6", call("c-6", { type: "video", status: "missed", participants: [part(1, "dee", false, "unanswered")] })], ["c-7", undefined]], 30));
    const report = await migrateClickHouse(cluster.config(DB));
    expect(report.applied.filter((a) => a.id === 12)).toHaveLength(2);
    state = await truthAndAggregate();
    for (const { truth, aggregate } of state) expect(aggregate).toEqual(truth);

    // A crash half way: 0012 not recorded, one month's checkpoint lost and that month half written again.
    for (const s of shards) {
      await s.command(`ALTER TABLE ${DB}.${MIGRATIONS_TABLE} DELETE WHERE id = 12`);
      await s.command(`ALTER TABLE ${DB}.${BY_MONTH_DIMS_FILL_CHECKPOINTS_TABLE} DELETE WHERE month = 202602`);
      await s.command(`INSERT INTO ${DB}.participants_by_month_dims_local SELECT * FROM ${DB}.participants_by_month_dims_local WHERE toYYYYMM(month) = 202602`);
    }
    await waitForMutations(shards);
    const again = await migrateClickHouse(cluster.config(DB));
    expect(again.applied.filter((a) => a.id === 12)).toHaveLength(2);
    expect(await truthAndAggregate()).toEqual(state);
    // Run once more by itself (every month checkpointed): nothing summed again, nothing changed.
    for (const s of shards) expect(await migration0012.fill(s, p)).toEqual([]);
    expect(await truthAndAggregate()).toEqual(state);
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
