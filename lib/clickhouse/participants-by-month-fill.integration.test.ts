import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openClickHouse, type ClickHouse } from "./client";
import { forHost } from "./config";
import { migrateClickHouse, MIGRATIONS_TABLE } from "./migrate";
import { migration0010 } from "./migrations/0010_participants_by_month_per_call";
import { BY_MONTH_FILL_CHECKPOINTS_TABLE } from "./participants-by-month-fill";
import type { CallStateV2 } from "./rows-v2";
import type { Placement } from "./schema";
import { CLICKHOUSE_SKIP_REASON, startClickHouse, type TestClickHouse } from "./test-clickhouse";
import { CallWriterV2, openShardsV2, type CallChangeV2 } from "./writer-v2";

/**
 * ClickHouse migration 0010 on two 18.16 shards: participants_by_month recreated with
 * joined / unanswered per distinct call, on a warehouse whose table and view were created
 * as before (joined summed joined rows, no unanswered). After it, every shard's
 * pre-aggregate equals the signed sums of its participant rows — calls, distinct calls
 * joined and left unanswered, minutes — per app, uid and month, including cancel rows of
 * a call moved across a month and of a delete; its view keeps it so for later writes; and
 * a run killed half way (a month half rebuilt, its checkpoint missing) ends the same.
 */

const DB = "callboard_by_month_test";
const APP = 6;
const JAN = Date.UTC(2026, 0, 31, 23, 50) / 1000;
const FEB = Date.UTC(2026, 1, 1, 0, 20) / 1000;

const part = (seq: number, uid: string, joined: boolean, state: string) => ({ seq, uid, isJoined: joined, state, audioX1000: seq * 100, videoX1000: 7, durationX1000: seq * 100 + 7 });
const call = (sessionId: string, more: Partial<CallStateV2> = {}): CallStateV2 => ({
  appPk: APP, sessionId, version: 0, startAt: JAN, type: "audio", mode: "call", status: "ended", receiverType: "user",
  platformHasRecording: false, audioX1000: 1_000, videoX1000: 0, durationX1000: 1_000, durationSeconds: 60,
  firstSeenMs: 1, arrival: 1, source: "sync", contentHash: null,
  // A uid unanswered, then joined twice (a rejoin: one call joined), and one never answering.
  participants: [part(1, "ann", false, "unanswered"), part(2, "ann", true, "ended"), part(3, "bob", false, "unanswered"), part(4, "ann", true, "ended")],
  ...more,
});

const FIRST = Array.from({ length: 12 }, (_, i) => call(`c-${i}`, { startAt: i % 2 ? FEB + i : JAN - i }));
/** A start moved from January to February, a delete, a uid replaced. */
const NEXT: Array<[string, CallStateV2 | undefined]> = [
  ["c-0", call("c-0", { startAt: FEB, participants: [part(1, "cy", true, "ended"), part(2, "ann", false, "unanswered")] })],
  ["c-2", undefined],
  ["c-3", call("c-3", { startAt: FEB + 3, participants: [part(1, "bob", true, "ended")] })],
];

const changes = (pairs: ReadonlyArray<[string, CallStateV2 | undefined]>, version: number): CallChangeV2[] =>
  pairs.map(([sessionId, next]) => ({ sessionId, version, next, raw: next ? "{}" : null }));

/** participants_by_month as migration 0005 created it, before 0010. */
const OLD_TABLE = (db: string) => `CREATE TABLE ${db}.participants_by_month_local (app_pk UInt32, uid_code UInt64, month Date, calls Int64, joined Int64,
  total_audio_minutes_x1000 Int64, total_video_minutes_x1000 Int64, total_duration_minutes_x1000 Int64)
  ENGINE = SummingMergeTree((calls, joined, total_audio_minutes_x1000, total_video_minutes_x1000, total_duration_minutes_x1000)) PARTITION BY toYYYYMM(month) ORDER BY (app_pk, uid_code, month)`;
const OLD_SELECT = (db: string) => `SELECT app_pk, uid_code, toStartOfMonth(start_at) AS month, sum(sign * first_of_uid) AS calls, sum(sign * is_joined) AS joined,
  sum(sign * total_audio_minutes_x1000) AS total_audio_minutes_x1000, sum(sign * total_video_minutes_x1000) AS total_video_minutes_x1000,
  sum(sign * total_duration_minutes_x1000) AS total_duration_minutes_x1000 FROM ${db}.participants_v2_local GROUP BY app_pk, uid_code, month`;

describe.skipIf(CLICKHOUSE_SKIP_REASON)("migration 0010: participants_by_month with joined / unanswered per distinct call", () => {
  let cluster: TestClickHouse;
  let ch: ClickHouse;
  let writer: CallWriterV2;
  let closeWriter: () => Promise<void>;
  const shards: ClickHouse[] = [];
  const p: Placement = { database: DB, cluster: undefined };

  /** Per shard: the signed sums of its participant rows, and its pre-aggregate, per (app, uid, month); non-zero groups, one order. */
  const truthAndAggregate = async () => {
    const out: Array<{ truth: unknown[]; aggregate: unknown[] }> = [];
    const nonZero = "HAVING calls != 0 OR joined != 0 OR unanswered != 0 OR ax != 0 OR vx != 0 OR tx != 0 ORDER BY app_pk, uid_code, month";
    for (const s of shards) {
      const truth = await s.rows(`SELECT app_pk, toString(uid_code) AS uid, toStartOfMonth(start_at) AS month, sum(sign * first_of_uid) AS calls,
          sum(sign * first_joined_of_uid) AS joined, sum(sign * first_unanswered_of_uid) AS unanswered, sum(sign * total_audio_minutes_x1000) AS ax,
          sum(sign * total_video_minutes_x1000) AS vx, sum(sign * total_duration_minutes_x1000) AS tx
        FROM ${DB}.participants_v2_local GROUP BY app_pk, uid_code, month ${nonZero}`);
      const aggregate = await s.rows(`SELECT app_pk, toString(uid_code) AS uid, month, sum(calls) AS calls, sum(joined) AS joined, sum(unanswered) AS unanswered,
          sum(total_audio_minutes_x1000) AS ax, sum(total_video_minutes_x1000) AS vx, sum(total_duration_minutes_x1000) AS tx
        FROM ${DB}.participants_by_month_local GROUP BY app_pk, uid_code, month ${nonZero}`);
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

  it("rebuilds every shard's pre-aggregate from its rows, keeps it with the view, and again after a crash", { timeout: 300_000 }, async () => {
    // A new warehouse: 0010 created the table and view, which kept them from the first write.
    let state = await truthAndAggregate();
    for (const { truth, aggregate } of state) {
      expect(truth.length).toBeGreaterThan(1);
      expect(aggregate).toEqual(truth);
    }
    const allTruth = state.flatMap((s) => s.truth) as Array<{ joined: number; unanswered: number; calls: number }>;
    // The fixture tells the figures apart: joined per distinct call is fewer than joined rows (rejoins); some calls unanswered.
    expect(allTruth.some((r) => Number(r.unanswered) > 0)).toBe(true);

    // The warehouse as it was before 0010: the old table and view, filled by the old view's SELECT, 0010 not recorded.
    for (const s of shards) {
      for (const t of ["participants_by_month_mv_local", "participants_by_month", "participants_by_month_local"]) await s.command(`DROP TABLE ${DB}.${t}`);
      await s.command(OLD_TABLE(DB));
      await s.command(`CREATE TABLE ${DB}.participants_by_month AS ${DB}.participants_by_month_local ENGINE = Distributed(${cluster.cluster}, ${DB}, participants_by_month_local, cityHash64(app_pk, uid_code))`);
      await s.command(`CREATE MATERIALIZED VIEW ${DB}.participants_by_month_mv_local TO ${DB}.participants_by_month_local AS ${OLD_SELECT(DB)}`);
      await s.command(`INSERT INTO ${DB}.participants_by_month_local ${OLD_SELECT(DB)}`);
      await s.command(`ALTER TABLE ${DB}.${MIGRATIONS_TABLE} DELETE WHERE id = 10`);
    }
    await waitForMutations(shards);
    const oldJoined = Number((await ch.rows<{ n: number }>(`SELECT sum(joined) AS n FROM ${DB}.participants_by_month`))[0].n);
    expect(oldJoined, "the old table counted joined rows").toBeGreaterThan(allTruth.reduce((s, r) => s + Number(r.joined), 0));

    const report = await migrateClickHouse(cluster.config(DB));
    expect(report.applied.filter((a) => a.id === 10)).toHaveLength(2);
    for (const { truth, aggregate } of await truthAndAggregate()) expect(aggregate).toEqual(truth);
    for (const s of shards) {
      const [view] = await s.rows<{ q: string }>(`SELECT create_table_query AS q FROM system.tables WHERE database = '${DB}' AND name = 'participants_by_month_mv_local'`);
      expect(view.q).toContain("first_unanswered_of_uid");
    }

    // Later writes go through the recreated view.
    await writer.write(APP, changes([["c-4", call("c-4", { startAt: FEB + 40, participants: [part(1, "dee", false, "unanswered")] })], ["c-5", undefined]], 30));
    state = await truthAndAggregate();
    for (const { truth, aggregate } of state) expect(aggregate).toEqual(truth);

    // A crash half way: 0010 not recorded, one month's checkpoint lost and that month half written again.
    for (const s of shards) {
      await s.command(`ALTER TABLE ${DB}.${MIGRATIONS_TABLE} DELETE WHERE id = 10`);
      await s.command(`ALTER TABLE ${DB}.${BY_MONTH_FILL_CHECKPOINTS_TABLE} DELETE WHERE month = 202602`);
      await s.command(`INSERT INTO ${DB}.participants_by_month_local SELECT * FROM ${DB}.participants_by_month_local WHERE toYYYYMM(month) = 202602`);
    }
    await waitForMutations(shards);
    const again = await migrateClickHouse(cluster.config(DB));
    expect(again.applied.filter((a) => a.id === 10)).toHaveLength(2);
    expect(await truthAndAggregate()).toEqual(state);
    // Run once more by itself (every month checkpointed): nothing rebuilt, nothing changed.
    for (const s of shards) expect(await migration0010.fill(s, p)).toEqual([]);
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
