import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openClickHouse, type ClickHouse } from "./client";
import { clusterHosts, reachAllClusterHosts } from "./cluster-hosts";
import { changeRowsV2, type CallStateV2 } from "./rows-v2";
import { createTableStatements, localName, qualified, RECORDINGS, type Placement } from "./schema";
import { CALLS_BY_BUCKET, CALLS_BY_MONTH, CALLS_V2, PARTICIPANTS_BY_MONTH, PARTICIPANTS_V2, SESSION_CODE_SQL, SHARD_BY_CALL, UID_CODE_SQL, UIDS, V2_TABLES, decodeClosed, shardByCallFromCode, viewStatements } from "./schema-v2";
import { migration0006 } from "./migrations/0006_calls_session_code";
import { stringLiteral } from "./sql";
import { CLICKHOUSE_SKIP_REASON, startClickHouse, type TestClickHouse } from "./test-clickhouse";
import { openChdb } from "./test-chdb";

/**
 * Schema v2's mechanisms on two 18.16 shards and on chdb (a current ClickHouse): calls that
 * change several times (a start moved across a month boundary, a type outside the
 * documented set), a delete, a cancel row that lands before the state it cancels, a
 * participant who rejoined. Every answer is read without FINAL, from the signed rows and
 * from the pre-aggregates the views keep, and must equal the live states; local days in
 * a +05:45 zone come out of 15-minute buckets exactly; a merge collapses the cancelled
 * states and changes no answer.
 */

const DB = "callboard_v2_test";
const T0 = Date.UTC(2026, 0, 31, 18, 10) / 1000; // 2026-01-31 23:55 in Asia/Kathmandu (+05:45), January in UTC

const state = (sessionId: string, version: number, more: Partial<CallStateV2> = {}): CallStateV2 => ({
  appPk: 1, sessionId, version, startAt: T0, type: "audio", mode: "call", status: "ongoing", receiverType: "user",
  platformHasRecording: false, audioX1000: 1_000, videoX1000: 0, durationX1000: 1_000, durationSeconds: 60,
  firstSeenMs: 1, arrival: 1, participants: [], ...more,
});

const alice = (seq: number, audio: number) => ({ seq, uid: "alice", isJoined: true, audioX1000: audio, videoX1000: 0, durationX1000: audio });
const bob = (seq: number, audio: number) => ({ seq, uid: "bob", isJoined: false, audioX1000: audio, videoX1000: 0, durationX1000: audio });

/** The history written, as the writers would: each step one insert of its rows. */
const c1v1 = state("c1", 1, { participants: [alice(1, 500)] });
const c1v2 = state("c1", 2, { startAt: T0 + 3_600 * 6, status: "ended", audioX1000: 3_000, participants: [alice(1, 500), bob(2, 700), alice(3, 900)] }); // February in UTC
const c1v3 = state("c1", 3, { startAt: T0 + 3_600 * 6, type: "screen", status: "ended", audioX1000: 5_000, participants: [alice(1, 600), bob(2, 700), alice(3, 900)] });
const c2v1 = state("c2", 1, { startAt: T0 + 60, participants: [bob(1, 100)] });
const c3v1 = state("c3", 1, { appPk: 2, startAt: T0 - 86_400 * 40, mode: "meet", receiverType: null, audioX1000: 7_000 });
const c4v1 = state("c4", 1, { startAt: T0 + 120, audioX1000: 11_000 });
// Moved 5 minutes: still January 31 in UTC, but February 1 in Kathmandu (its midnight is 18:15 UTC, a bucket edge).
const c4v2 = state("c4", 2, { startAt: T0 + 420, audioX1000: 13_000, status: "ended" });
const STEPS: Array<[CallStateV2 | undefined, CallStateV2 | undefined]> = [
  [undefined, c1v1], [undefined, c2v1], [undefined, c3v1],
  [c1v1, c1v2], [c2v1, undefined], [c1v2, c1v3],
  // c4's replacement lands before its first state (a retried insert, a late writer).
  [c4v1, c4v2], [undefined, c4v1],
];
const LIVE = [c1v3, c3v1, c4v2];

const dayIn = (epoch: number, zone: string) => new Intl.DateTimeFormat("en-CA", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit" }).format(new Date(epoch * 1000));

/** What the reports must answer, from the live states. */
function expected() {
  const byApp = new Map<number, { calls: number; audio: number }>();
  const byType = new Map<string, number>();
  const byDay = new Map<string, { calls: number; audio: number }>();
  const byUid = new Map<string, { calls: number; joined: number; audio: number }>();
  for (const s of LIVE) {
    const a = byApp.get(s.appPk) ?? { calls: 0, audio: 0 };
    byApp.set(s.appPk, { calls: a.calls + 1, audio: a.audio + s.audioX1000 });
    byType.set(String(s.type), (byType.get(String(s.type)) ?? 0) + 1);
    const day = dayIn(s.startAt, "Asia/Kathmandu");
    const d = byDay.get(day) ?? { calls: 0, audio: 0 };
    byDay.set(day, { calls: d.calls + 1, audio: d.audio + s.audioX1000 });
    for (const [i, p] of s.participants.entries()) {
      const u = byUid.get(p.uid) ?? { calls: 0, joined: 0, audio: 0 };
      const first = s.participants.findIndex((q) => q.uid === p.uid) === i;
      // Joined: the distinct calls (a rejoin counts once), as participants_by_month keeps it since migration 0010.
      const firstJoined = s.participants.findIndex((q) => q.uid === p.uid && q.isJoined) === i;
      byUid.set(p.uid, { calls: u.calls + (first ? 1 : 0), joined: u.joined + (firstJoined ? 1 : 0), audio: u.audio + p.audioX1000 });
    }
  }
  const sorted = <V>(m: Map<string | number, V>) => [...m.entries()].sort(([a], [b]) => String(a).localeCompare(String(b)));
  return {
    byApp: sorted(byApp).map(([app, v]) => ({ app: Number(app), ...v })),
    byType: sorted(byType).map(([type, calls]) => ({ type, calls })),
    byDay: sorted(byDay).map(([day, v]) => ({ day, ...v })),
    byUid: sorted(byUid).map(([uid, v]) => ({ uid, ...v })),
  };
}

async function writeHistory(ch: ClickHouse): Promise<void> {
  const texts = ["alice", "bob", "c1", "c2", "c3", "c4"];
  const found = await ch.rows<{ text: string; uid: string; session: string }>(
    `SELECT text, toString(${UID_CODE_SQL("text")}) AS uid, toString(${SESSION_CODE_SQL("text")}) AS session FROM (SELECT arrayJoin([${texts.map(stringLiteral).join(", ")}]) AS text)`,
  );
  const code = new Map(found.map((r) => [r.text, r]));
  const codes = { uid: (uid: string) => code.get(uid)?.uid ?? "0", session: (sessionId: string) => code.get(sessionId)?.session ?? "0" };
  for (const [previous, next] of STEPS) {
    const rows = changeRowsV2(previous, next, codes);
    await ch.insert(CALLS_V2.name, rows.calls);
    await ch.insert(PARTICIPANTS_V2.name, rows.participants);
    await ch.insert(UIDS.name, rows.uids);
  }
}

/** Every answer, read the two ways, without FINAL. */
async function answers(ch: ClickHouse) {
  const db = ch.placement.database;
  const t = (name: string) => qualified(db, name);
  const fromRows = {
    byApp: await ch.rows(`SELECT app_pk AS app, sum(sign) AS calls, sum(sign * total_audio_minutes_x1000) AS audio FROM ${t("calls_v2")} GROUP BY app HAVING calls != 0 ORDER BY app`),
    byType: await ch.rows(`SELECT ${decodeClosed("type")} AS type, sum(sign) AS calls FROM ${t("calls_v2")} GROUP BY type HAVING calls != 0 ORDER BY type`),
    byDay: await ch.rows(`SELECT toString(toDate(start_at, 'Asia/Kathmandu')) AS day, sum(sign) AS calls, sum(sign * total_audio_minutes_x1000) AS audio FROM ${t("calls_v2")} GROUP BY day HAVING calls != 0 ORDER BY day`),
    byUid: await ch.rows(`SELECT u.uid AS uid, sum(sign * first_of_uid) AS calls, sum(sign * first_joined_of_uid) AS joined, sum(sign * total_audio_minutes_x1000) AS audio
      FROM ${t("participants_v2")} AS p GLOBAL ALL INNER JOIN (SELECT DISTINCT uid_code, uid FROM ${t("uids")}) AS u USING uid_code GROUP BY uid HAVING calls != 0 ORDER BY uid`),
  };
  const fromAggregates = {
    byApp: await ch.rows(`SELECT app_pk AS app, sum(calls) AS calls, sum(total_audio_minutes_x1000) AS audio FROM ${t("calls_by_bucket")} GROUP BY app HAVING calls != 0 ORDER BY app`),
    // Whole months (here: all time) from the monthly pre-aggregate.
    byType: await ch.rows(`SELECT ${decodeClosed("type")} AS type, sum(calls) AS calls FROM ${t("calls_by_month")} GROUP BY type HAVING calls != 0 ORDER BY type`),
    byDay: await ch.rows(`SELECT toString(toDate(bucket, 'Asia/Kathmandu')) AS day, sum(calls) AS calls, sum(total_audio_minutes_x1000) AS audio FROM ${t("calls_by_bucket")} GROUP BY day HAVING calls != 0 ORDER BY day`),
    byUid: await ch.rows(`SELECT u.uid AS uid, sum(calls) AS calls, sum(joined) AS joined, sum(total_audio_minutes_x1000) AS audio
      FROM ${t("participants_by_month")} AS m GLOBAL ALL INNER JOIN (SELECT DISTINCT uid_code, uid FROM ${t("uids")}) AS u USING uid_code GROUP BY uid HAVING calls != 0 ORDER BY uid`),
  };
  return { fromRows, fromAggregates };
}

async function createV2(ch: ClickHouse, p: Placement): Promise<void> {
  await ch.command(`CREATE DATABASE IF NOT EXISTS \`${p.database}\``);
  // recordings: the writers look the batch's links up (has_link).
    for (const table of [...V2_TABLES, RECORDINGS]) for (const statement of createTableStatements(p, table)) await ch.command(statement);
  for (const statement of viewStatements(p)) await ch.command(statement);
  // Migration 0006's column, which the writers' rows carry.
  for (const statement of migration0006.statements(p, false)) await ch.command(typeof statement === "string" ? statement : statement.sql);
}

function checkAnswers(got: Awaited<ReturnType<typeof answers>>): void {
  const want = expected();
  // The history is what the test says it is: a call moved to February, a type outside the set, a delete, a rejoin.
  expect(want.byType).toEqual([{ type: "audio", calls: 2 }, { type: "screen", calls: 1 }]);
  expect(want.byDay).toEqual([{ day: "2025-12-22", calls: 1, audio: 7_000 }, { day: "2026-02-01", calls: 2, audio: 18_000 }]);
  expect(want.byUid).toEqual([{ uid: "alice", calls: 1, joined: 1, audio: 1_500 }, { uid: "bob", calls: 1, joined: 0, audio: 700 }]);
  expect(got.fromRows).toEqual(want);
  expect(got.fromAggregates).toEqual(want);
}

/** How many of 20,000 (app, session) pairs get the same shard hash from the session code as from the session id (all must). */
async function shardHashFromCodeAgrees(ch: ClickHouse): Promise<{ n: number; same: number }> {
  const [r] = await ch.rows<{ n: number; same: number }>(
    `SELECT count() AS n, countIf(by_id = by_code) AS same FROM (
      SELECT toUInt32(number % 97) AS app_pk, concat('v1.in.', toString(number * 7919), '.', hex(number)) AS session_id,
        ${SESSION_CODE_SQL("session_id")} AS session_code, ${SHARD_BY_CALL} AS by_id, ${shardByCallFromCode("app_pk", "session_code")} AS by_code
      FROM system.numbers LIMIT 20000)`,
  );
  return r;
}

describe.skipIf(CLICKHOUSE_SKIP_REASON)("schema v2 on two 18.16 shards", () => {
  let cluster: TestClickHouse;
  let ch: ClickHouse;
  const shards: ClickHouse[] = [];

  beforeAll(async () => {
    cluster = await startClickHouse({ shards: 2 });
    const config = cluster.config(DB);
    const boot = openClickHouse(config, { noDatabase: true });
    const reached = await reachAllClusterHosts(config, config.cluster ?? "", await clusterHosts(boot, config.cluster ?? ""));
    await boot.close();
    for (const r of reached) {
      await createV2(r.client, { database: DB, cluster: config.cluster });
      shards.push(r.client);
    }
    ch = openClickHouse(config);
    await writeHistory(ch);
  }, 120_000);
  afterAll(async () => {
    for (const s of shards) await s.close();
    await ch?.close();
    await cluster?.stop();
  });

  it("spreads the calls over both shards, every row of a call on one", async () => {
    const p: Placement = { database: DB, cluster: cluster.cluster };
    // The live calls (c2 was deleted: its cancel row and state may already have merged away).
    const perShard = await Promise.all(shards.map((s) => s.rows<{ session_id: string }>(`SELECT session_id FROM ${qualified(DB, localName(p, "calls_v2"))} GROUP BY session_id HAVING sum(sign) != 0 ORDER BY session_id`)));
    expect(perShard.every((s) => s.length > 0)).toBe(true);
    expect(perShard.flat().map((r) => r.session_id).sort()).toEqual(["c1", "c3", "c4"]);
  });

  it("routes a call's signed rows and its participant rows by v1's key, cityHash64(app_pk, session_id)", async () => {
    expect(await shardHashFromCodeAgrees(ch)).toEqual({ n: 20000, same: 20000 });
    const p: Placement = { database: DB, cluster: cluster.cluster };
    const local = (t: string) => qualified(DB, localName(p, t));
    // Equal weights: shard i holds the rows whose hash % 2 = i, in the cluster's order (reachAllClusterHosts).
    for (const [i, s] of shards.entries()) {
      const [calls] = await s.rows<{ n: number; misplaced: number }>(`SELECT count() AS n, countIf(${SHARD_BY_CALL} % 2 != ${i}) AS misplaced FROM ${local("calls_v2")}`);
      const [people] = await s.rows<{ n: number; misplaced: number }>(
        `SELECT count() AS n, countIf(${shardByCallFromCode("app_pk", "session_code")} % 2 != ${i}) AS misplaced FROM ${local("participants_v2")}`,
      );
      expect(calls.n).toBeGreaterThan(0);
      expect(calls.misplaced).toBe(0);
      expect(people.misplaced).toBe(0);
    }
  });

  it("answers every total from the signed rows and from the pre-aggregates alike, with no FINAL, before any merge", async () => {
    checkAnswers(await answers(ch));
  });

  it("collapses cancelled states when the shards merge, and answers the same after", async () => {
    const p: Placement = { database: DB, cluster: cluster.cluster };
    for (const s of shards) for (const table of [CALLS_V2, PARTICIPANTS_V2, CALLS_BY_BUCKET, CALLS_BY_MONTH, PARTICIPANTS_BY_MONTH]) await s.command(`OPTIMIZE TABLE ${qualified(DB, localName(p, table.name))} FINAL`);
    const [rows] = await ch.rows<{ n: number; live: number }>(`SELECT count() AS n, sum(sign) AS live FROM ${qualified(DB, "calls_v2")}`);
    expect(rows).toEqual({ n: LIVE.length, live: LIVE.length });
    checkAnswers(await answers(ch));
  });
});

describe("schema v2 on chdb (a current ClickHouse)", () => {
  it("answers the same from the signed rows and the pre-aggregates, before and after a merge", async () => {
    const ch = openChdb(DB);
    try {
      expect(await shardHashFromCodeAgrees(ch)).toEqual({ n: 20000, same: 20000 });
      await createV2(ch, ch.placement);
      await writeHistory(ch);
      checkAnswers(await answers(ch));
      for (const table of [CALLS_V2, PARTICIPANTS_V2, CALLS_BY_BUCKET, CALLS_BY_MONTH, PARTICIPANTS_BY_MONTH]) await ch.command(`OPTIMIZE TABLE ${qualified(DB, table.name)} FINAL`);
      const [rows] = await ch.rows<{ n: number }>(`SELECT count() AS n FROM ${qualified(DB, "calls_v2")}`);
      expect(rows.n).toBe(LIVE.length);
      checkAnswers(await answers(ch));
    } finally {
      await ch.close();
    }
  });
});
