import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openClickHouse, type ClickHouse } from "./client";
import { forHost } from "./config";
import { applyMigrations, migrateClickHouse, MIGRATIONS_TABLE } from "./migrate";
import { migration0008 } from "./migrations/0008_participant_call_columns";
import { FILL_CHECKPOINTS_TABLE } from "./participants-fill";
import type { CallStateV2 } from "./rows-v2";
import { qualified, type Placement } from "./schema";
import { PARTICIPANT_CALL_COLUMNS, PARTICIPANTS_V2 } from "./schema-v2";
import { CLICKHOUSE_SKIP_REASON, startClickHouse, type TestClickHouse } from "./test-clickhouse";
import { CallWriterV2, openShardsV2, type CallChangeV2 } from "./writer-v2";

/**
 * ClickHouse migration 0008 on a warehouse already on v2 (two 18.16 shards): the rows
 * written before participants_v2 had PARTICIPANT_CALL_COLUMNS get them filled, exactly as
 * the writers fill them now — first joined / unanswered row of each uid in its call state
 * (cancel rows included), the call's dimensions — on every shard, and a run redone after a
 * crash (checkpoints lost, a half-written staging table left) gives the same rows.
 */

const DB = "callboard_fill_test";
const APP = 4;
const JAN = Date.UTC(2026, 0, 31, 23, 50) / 1000;
const FEB = Date.UTC(2026, 1, 1, 0, 20) / 1000;

const part = (seq: number, uid: string, joined: boolean, state: string) => ({ seq, uid, isJoined: joined, state, audioX1000: seq * 100, videoX1000: 0, durationX1000: seq * 100 });
const call = (sessionId: string, more: Partial<CallStateV2> = {}): CallStateV2 => ({
  appPk: APP, sessionId, version: 0, startAt: JAN, type: "audio", mode: "call", status: "ended", receiverType: "user",
  platformHasRecording: false, audioX1000: 1_000, videoX1000: 0, durationX1000: 1_000, durationSeconds: 60,
  firstSeenMs: 1, arrival: 1, source: "sync", contentHash: null,
  // A uid that was unanswered, then joined twice (a rejoin), and one never answering.
  participants: [part(1, "ann", false, "unanswered"), part(2, "ann", true, "ended"), part(3, "bob", false, "unanswered"), part(4, "ann", true, "ended")],
  ...more,
});

const FIRST = Array.from({ length: 12 }, (_, i) => call(`c-${i}`, { type: i % 2 ? "video" : "audio", mode: i % 3 ? "meet" : "call", totalParticipants: 4 + (i % 2) }));
/** Changes: a start moved to February (a cancel row in January), a new type outside the set, a delete. */
const NEXT: Array<[string, CallStateV2 | undefined]> = [
  ["c-0", call("c-0", { startAt: FEB, status: "rejected", participants: [part(1, "cy", true, "ended")] })],
  ["c-1", call("c-1", { type: "screen", receiverType: null })],
  ["c-2", undefined],
];

const changes = (pairs: ReadonlyArray<[string, CallStateV2 | undefined]>, version: number): CallChangeV2[] =>
  pairs.map(([sessionId, next]) => ({ sessionId, version, next, raw: next ? "{}" : null }));

describe.skipIf(CLICKHOUSE_SKIP_REASON)("migration 0008: participant rows filled with their call's dimensions and first joined / unanswered flags", () => {
  let cluster: TestClickHouse;
  let ch: ClickHouse;
  const shards: ClickHouse[] = [];
  const p: Placement = { database: DB, cluster: undefined };

  /** Every participant row of every shard, every column, in one order. */
  const rowsOf = async () => {
    const all: unknown[] = [];
    for (const s of shards) {
      all.push(...(await s.rows(`SELECT * FROM ${qualified(DB, `${PARTICIPANTS_V2.name}_local`)} ORDER BY app_pk, start_at, session_code, seq, version, sign`)));
    }
    return all;
  };

  beforeAll(async () => {
    cluster = await startClickHouse({ shards: 2 });
    p.cluster = cluster.cluster;
    ch = openClickHouse(cluster.config(DB));
    for (const s of cluster.servers) shards.push(openClickHouse(forHost(cluster.config(DB), s.host)));
    await migrateClickHouse(cluster.config(DB));
    const writerShards = await openShardsV2(ch, cluster.config(DB));
    const writer = new CallWriterV2(ch, writerShards);
    await writer.write(APP, changes(FIRST.map((s) => [s.sessionId, s]), 10));
    await writer.write(APP, changes(NEXT, 20));
    for (const s of writerShards) await s.client.close();
  }, 180_000);
  afterAll(async () => {
    for (const s of shards) await s.close();
    await ch?.close();
    await cluster?.stop();
  }, 120_000);

  it("fills the rows stored before the columns existed as the writers write them, on every shard, and again after a crash", { timeout: 300_000 }, async () => {
    const written = await rowsOf();
    expect(written.length).toBeGreaterThan(40);
    // Both shards hold rows, among them cancel rows, a call type outside the set, the flags.
    for (const s of shards) expect((await s.rows<{ n: number }>(`SELECT count() AS n FROM ${DB}.participants_v2_local`))[0].n).toBeGreaterThan(5);
    const [sums] = await ch.rows<Record<string, number>>(
      `SELECT countIf(sign = -1) AS cancels, countIf(type = 'other' AND type_other = 'screen') AS other, sum(first_joined_of_uid) AS joined, sum(first_unanswered_of_uid) AS unanswered FROM ${DB}.participants_v2`,
    );
    expect(Number(sums.cancels)).toBeGreaterThan(0);
    expect(Number(sums.other)).toBeGreaterThan(0);
    expect(Number(sums.joined)).toBeGreaterThan(0);
    expect(Number(sums.unanswered)).toBeGreaterThan(0);

    // The warehouse as it was before 0008: the columns gone, the migration not recorded.
    const names = PARTICIPANT_CALL_COLUMNS.map(([n]) => n);
    for (const s of shards) {
      for (const table of ["participants_v2", "participants_v2_local"]) for (const n of names) await s.command(`ALTER TABLE ${DB}.${table} DROP COLUMN ${n}`);
      await s.command(`TRUNCATE TABLE ${DB}.${MIGRATIONS_TABLE}`);
    }
    // The columns alone (no fill) leave the stored rows wrong: what the fill is for.
    for (const s of shards) await applyMigrations(s, p, false, [{ ...migration0008, fill: undefined }]);
    expect(await rowsOf()).not.toEqual(written);

    // A crash: 0008 not recorded, some months checkpointed on one shard, a half-written staging table.
    for (const s of shards) await s.command(`ALTER TABLE ${DB}.${MIGRATIONS_TABLE} DELETE WHERE id = 8`);
    await waitForMutations(shards);
    await shards[0].command(`CREATE TABLE ${DB}.participants_v2_fill AS ${DB}.participants_v2_local`);
    await shards[0].command(`INSERT INTO ${DB}.participants_v2_fill SELECT * FROM ${DB}.participants_v2_local`);
    const report = await migrateClickHouse(cluster.config(DB));
    expect(report.applied.filter((a) => a.id === 8)).toHaveLength(2);
    expect(await rowsOf()).toEqual(written);
    for (const s of shards) {
      expect((await s.rows<{ n: number }>(`SELECT count() AS n FROM system.tables WHERE database = '${DB}' AND name = 'participants_v2_fill'`))[0].n).toBe(0);
      expect((await s.rows<{ n: number }>(`SELECT count() AS n FROM ${DB}.${FILL_CHECKPOINTS_TABLE}`))[0].n).toBeGreaterThan(0);
    }

    // Redone over filled rows (the checkpoints lost, as a crash between a month's swap and its checkpoint leaves it): the same rows.
    for (const s of shards) {
      await s.command(`TRUNCATE TABLE ${DB}.${FILL_CHECKPOINTS_TABLE}`);
      await migration0008.fill(s, p);
    }
    expect(await rowsOf()).toEqual(written);
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
