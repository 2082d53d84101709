import type { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertsSettled, runWriterChild } from "./test-writer-v2-kill";
import { openClickHouse, type ClickHouse } from "./client";
import { clusterHosts, reachAllClusterHosts } from "./cluster-hosts";
import type { CallStateV2 } from "./rows-v2";
import { createTableStatements, qualified, RECORDINGS, type Placement } from "./schema";
import { SESSION_CODE_SQL, SHARD_BY_CALL, V2_TABLES, shardByCallFromCode, viewStatements } from "./schema-v2";
import { migration0006 } from "./migrations/0006_calls_session_code";
import { CLICKHOUSE_SKIP_REASON, startClickHouse, type TestClickHouse } from "./test-clickhouse";
import { CallWriterV2, openShardsV2, type CallChangeV2, type ShardV2, type WriteStepV2 } from "./writer-v2";

/**
 * The v2 writer on two 18.16 shards: every change lands exactly once. A history of changes
 * (a start moved across a month, participants that change, a delete, a new call) is
 * written, and the signed rows and the pre-aggregates must then hold exactly the live
 * states, read with sum(sign) and no FINAL:
 * - written in order, and written again (a replay changes nothing);
 * - when every insert "times out" after it landed and is retried (never sent twice);
 * - when the writing process is SIGKILLed before each of its steps, then the same changes
 *   are written again by a new process with new versions (a sync run again), or nothing
 *   is written again and the next reader of those calls completes them (a sync that finds
 *   them unchanged).
 */

const APP = 7;
const JAN = Date.UTC(2026, 0, 31, 23, 50) / 1000;
const FEB = Date.UTC(2026, 1, 1, 0, 20) / 1000;

const part = (seq: number, uid: string, audio: number, joined = true) => ({ seq, uid, isJoined: joined, audioX1000: audio, videoX1000: 0, durationX1000: audio, deviceId: `dev-${uid}`, mid: `mid-${seq}` });
const state = (sessionId: string, more: Partial<CallStateV2> = {}): CallStateV2 => ({
  appPk: APP, sessionId, version: 0, startAt: JAN, type: "audio", mode: "call", status: "ongoing", receiverType: "user",
  platformHasRecording: false, audioX1000: 1_000, videoX1000: 0, durationX1000: 1_000, durationSeconds: 60,
  firstSeenMs: 1, arrival: 1, participants: [], source: "sync", contentHash: `h-${sessionId}`, ...more,
});

/** The first states: ten calls with participants, on both shards. */
const FIRST = Array.from({ length: 10 }, (_, i) => state(`call-${i}`, { audioX1000: 1_000 * (i + 1), participants: [part(1, "ann", 100 * i), part(2, `u${i % 3}`, 50)] }));
/** The changes: calls 0–3 change (0 and 1 move to February, 2 gains a rejoin), 4 is deleted, call-new appears. */
const NEXT: Array<[string, CallStateV2 | undefined]> = [
  ["call-0", state("call-0", { startAt: FEB, status: "ended", audioX1000: 9_000, participants: [part(1, "ann", 700), part(2, "u0", 80)] })],
  ["call-1", state("call-1", { startAt: FEB, status: "ended", audioX1000: 8_000, participants: [] })],
  ["call-2", state("call-2", { type: "screen", participants: [part(1, "ann", 10), part(2, "u2", 20), part(3, "ann", 30)] })],
  ["call-3", state("call-3", { audioX1000: 3_333, participants: [part(1, "bob", 1)] })],
  ["call-4", undefined],
  ["call-new", state("call-new", { startAt: FEB, participants: [part(1, "zed", 5)] })],
];

const changes = (pairs: ReadonlyArray<[string, CallStateV2 | undefined]>, version: number): CallChangeV2[] =>
  pairs.map(([sessionId, next]) => ({ sessionId, version, next, raw: next ? JSON.stringify({ sessionId }) : null }));

/** The live states once NEXT is applied to FIRST. */
function liveAfter(pairs: ReadonlyArray<[string, CallStateV2 | undefined]>): CallStateV2[] {
  const live = new Map(FIRST.map((s) => [s.sessionId, s]));
  for (const [id, next] of pairs) {
    if (next) live.set(id, next);
    else live.delete(id);
  }
  return [...live.values()];
}

/** What the tables must answer for `live`: per call, per uid, and the pre-aggregates' totals. */
function expected(live: CallStateV2[]) {
  const calls = live.map((s) => ({ session_id: s.sessionId, n: 1, audio: s.audioX1000, start: s.startAt })).sort((a, b) => a.session_id.localeCompare(b.session_id));
  const uids = new Map<string, { calls: number; audio: number }>();
  for (const s of live) {
    const seen = new Set<string>();
    for (const p of s.participants) {
      const u = uids.get(p.uid) ?? { calls: 0, audio: 0 };
      uids.set(p.uid, { calls: u.calls + (seen.has(p.uid) ? 0 : 1), audio: u.audio + p.audioX1000 });
      seen.add(p.uid);
    }
  }
  const byUid = [...uids.entries()].map(([uid, v]) => ({ uid, ...v })).sort((a, b) => a.uid.localeCompare(b.uid));
  return { calls, byUid, months: { calls: live.length, audio: live.reduce((n, s) => n + s.audioX1000, 0) } };
}

async function answers(ch: ClickHouse) {
  const t = (name: string) => qualified(ch.placement.database, name);
  const calls = await ch.rows<{ session_id: string; n: number; audio: number; start: number }>(
    `SELECT session_id, sum(sign) AS n, sum(sign * total_audio_minutes_x1000) AS audio, toUInt32(max(if(sign > 0, start_at, toDateTime(0)))) AS start
     FROM ${t("calls_v2")} WHERE app_pk = ${APP} GROUP BY session_id HAVING n != 0 OR audio != 0 ORDER BY session_id`,
  );
  // Participants of calls that were cancelled stay (collapsed only by a merge) but sum to 0.
  const byUid = await ch.rows<{ uid: string; calls: number; audio: number }>(
    `SELECT u.uid AS uid, sum(sign * first_of_uid) AS calls, sum(sign * total_audio_minutes_x1000) AS audio
     FROM ${t("participants_v2")} AS p GLOBAL ALL INNER JOIN (SELECT DISTINCT uid_code, uid FROM ${t("uids")} WHERE app_pk = ${APP}) AS u USING uid_code
     WHERE app_pk = ${APP} GROUP BY uid HAVING calls != 0 OR audio != 0 ORDER BY uid`,
  );
  const [months] = await ch.rows<{ calls: number; audio: number }>(`SELECT sum(calls) AS calls, sum(total_audio_minutes_x1000) AS audio FROM ${t("calls_by_month")} WHERE app_pk = ${APP}`);
  return { calls: calls.map((r) => ({ ...r, start: Number(r.start) })), byUid, months: { calls: Number(months.calls), audio: Number(months.audio) } };
}

async function createV2(cluster: TestClickHouse, database: string): Promise<void> {
  const config = cluster.config(database);
  const boot = openClickHouse(config, { noDatabase: true });
  const reached = await reachAllClusterHosts(config, config.cluster ?? "", await clusterHosts(boot, config.cluster ?? ""));
  await boot.close();
  const p: Placement = { database, cluster: config.cluster };
  for (const r of reached) {
    await r.client.command(`CREATE DATABASE IF NOT EXISTS \`${database}\``);
    // recordings: the writers look the batch's links up (has_link).
    for (const table of [...V2_TABLES, RECORDINGS]) for (const statement of createTableStatements(p, table)) await r.client.command(statement);
    for (const statement of viewStatements(p)) await r.client.command(statement);
    for (const statement of migration0006.statements(p, false)) await r.client.command(typeof statement === "string" ? statement : statement.sql);
    await r.client.close();
  }
}

/** A shard where every other insert lands and then fails as a timeout would (its answer lost). */
function losingAnswers(shard: ShardV2, counter: { lost: number }): ShardV2 {
  let inserts = 0;
  return {
    weight: shard.weight,
    client: {
      ...shard.client,
      async insertStream(table: string, body: Readable, options) {
        await shard.client.insertStream(table, body, options);
        if (inserts++ % 2 === 0) {
          counter.lost++;
          throw new Error("Timeout error.");
        }
      },
    },
  };
}

describe.skipIf(CLICKHOUSE_SKIP_REASON)("the v2 writer on two 18.16 shards", () => {
  let cluster: TestClickHouse;
  const open: ClickHouse[] = [];
  let dbCount = 0;

  beforeAll(async () => {
    cluster = await startClickHouse({ shards: 2 });
  }, 120_000);
  afterAll(async () => {
    await Promise.all(open.map((c) => c.close()));
    await cluster?.stop();
  }, 120_000);

  /** A fresh database with the v2 tables, its client and each shard's. */
  async function fresh() {
    const database = `writer_v2_${++dbCount}`;
    await createV2(cluster, database);
    const config = cluster.config(database);
    const ch = openClickHouse(config);
    const shards = await openShardsV2(ch, config);
    open.push(ch, ...shards.map((s) => s.client));
    return { database, config, ch, shards };
  }

  it("writes changes as cancel rows and new states, on both shards, and a replay changes nothing", async () => {
    const { ch, shards } = await fresh();
    const writer = new CallWriterV2(ch, shards);
    const first = await writer.write(APP, changes(FIRST.map((s) => [s.sessionId, s]), 1_000));
    expect(first.written).toBe(10);
    expect(await answers(ch)).toEqual(expected(FIRST));
    const second = await writer.write(APP, changes(NEXT, 2_000));
    expect(second.written).toBe(6);
    const want = expected(liveAfter(NEXT));
    expect(await answers(ch)).toEqual(want);
    // Both shards hold calls; every call's rows are on one of them.
    const perShard = await Promise.all(shards.map((s) => s.client.rows<{ n: number }>(`SELECT count() AS n FROM ${qualified(ch.placement.database, "calls_v2_local")}`)));
    expect(perShard.every(([r]) => Number(r.n) > 0)).toBe(true);
    // On the shard of v1's per-call rows (recordings, client sessions): cityHash64(app_pk, session_id) % 2, in shard order.
    for (const [i, s] of shards.entries()) {
      const local = (t: string) => qualified(ch.placement.database, `${t}_local`);
      const [misplaced] = await s.client.rows<Record<string, number>>(
        `SELECT (SELECT countIf(${SHARD_BY_CALL} % 2 != ${i}) FROM ${local("calls_v2")}) AS calls, (SELECT countIf(${SHARD_BY_CALL} % 2 != ${i}) FROM ${local("call_raw")}) AS raw,
          (SELECT countIf(${shardByCallFromCode("app_pk", "session_code")} % 2 != ${i}) FROM ${local("participants_v2")}) AS participants`,
      );
      expect(misplaced).toEqual({ calls: 0, raw: 0, participants: 0 });
      // Every call row carries its session code (migration 0006), which the reads look calls up by.
      const [codes] = await s.client.rows<{ wrong: number }>(`SELECT countIf(session_code != ${SESSION_CODE_SQL("session_id")}) AS wrong FROM ${local("calls_v2")}`);
      expect(codes).toEqual({ wrong: 0 });
    }
    // The same batch again (the copy run twice): versions already stored, nothing written.
    expect((await new CallWriterV2(ch, shards).write(APP, changes(NEXT, 2_000))).written).toBe(0);
    expect(await answers(ch)).toEqual(want);
    // Deleting a call never written writes nothing.
    expect((await writer.write(APP, [{ sessionId: "never", version: 3_000, next: undefined }])).written).toBe(0);
    // The call's page reads its details by key from call_raw.
    const [rawRow] = await ch.rows<{ p_uid: string[]; p_device_id: string[]; p_mid: string[]; raw: string }>(
      `SELECT p_uid, p_device_id, p_mid, raw FROM ${qualified(ch.placement.database, "call_raw")} WHERE app_pk = ${APP} AND session_id = 'call-0' ORDER BY version DESC LIMIT 1`,
    );
    expect(rawRow).toEqual({ p_uid: ["ann", "u0"], p_device_id: ["dev-ann", "dev-u0"], p_mid: ["mid-1", "mid-2"], raw: JSON.stringify({ sessionId: "call-0" }) });
  });

  it("never sends twice an insert that timed out after it landed", async () => {
    const { ch, shards } = await fresh();
    const counter = { lost: 0 };
    const flaky = shards.map((s) => losingAnswers(s, counter));
    const writer = new CallWriterV2(ch, flaky, { retryMs: 10 });
    await writer.write(APP, changes(FIRST.map((s) => [s.sessionId, s]), 1_000));
    await writer.write(APP, changes(NEXT, 2_000));
    expect(counter.lost).toBeGreaterThanOrEqual(6); // inserts of calls and participants among them
    expect(await answers(ch)).toEqual(expected(liveAfter(NEXT)));
  });

const STEPS: WriteStepV2[] = ["looked-up", "uids", "raw", "calls", "participants", "done"];

  async function killedAt(step: WriteStepV2) {
    const env = await fresh();
    await new CallWriterV2(env.ch, env.shards).write(APP, changes(FIRST.map((s) => [s.sessionId, s]), 1_000));
    const { signal, out } = await runWriterChild({ ...cluster.env(env.database), APP_PK: String(APP), CHANGES: JSON.stringify(changes(NEXT, 2_000)), KILL_STEP: step });
    expect({ signal, out }).toEqual({ signal: "SIGKILL", out: "" });
    await insertsSettled(env.shards.map((s) => s.client));
    return env;
  }

  for (const step of STEPS) {
    it(`converges when the writer is killed before "${step}" and the changes are written again`, async () => {
      const { ch, shards } = await killedAt(step);
      // A sync run again: the same records, new versions, a new process.
      const result = await new CallWriterV2(ch, shards).write(APP, changes(NEXT, 3_000));
      expect(result.written).toBeGreaterThan(0);
      expect(await answers(ch)).toEqual(expected(liveAfter(NEXT)));
    }, 60_000);

    it(`converges when the writer is killed before "${step}" and the next reader completes what it left`, async () => {
      const { ch, shards } = await killedAt(step);
      const writer = new CallWriterV2(ch, shards);
      const ids = [...FIRST.map((s) => s.sessionId), "call-new"];
      const stored = await writer.lookup(APP, ids);
      await writer.complete(APP, stored.values());
      // Whatever the killed writer recorded as its intent is now whole; the rest is as before.
      const recorded = NEXT.filter(([id]) => stored.get(id)?.version === 2_000);
      if (step === "looked-up" || step === "uids" || step === "raw") expect(recorded).toEqual([]);
      if (step === "done") expect(recorded).toEqual(NEXT);
      expect(await answers(ch)).toEqual(expected(liveAfter(recorded)));
      // A second completion finds nothing left to do.
      expect(await writer.complete(APP, (await writer.lookup(APP, ids)).values())).toBe(0);
    }, 60_000);
  }
});
