import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import { filters } from "@/lib/analytics/filters";
import { createClickHouseEngine } from "@/lib/analytics/engines/clickhouse";
import { openFixtureDb } from "@/lib/analytics/test-fixtures";
import { clickHouseForwardTarget } from "@/lib/ingest/clickhouse-target";
import { Forwarder } from "@/lib/ingest/forwarder";
import { recordingGenerated } from "@/lib/ingest/test-deliveries";
import { postJson, startHarness } from "@/lib/ingest/test-harness";
import { releaseSyncLease, takeSyncLease } from "@/lib/locks/sync-lease";
import { insertsSettled, runWriterChild } from "./test-writer-v2-kill";
import { openClickHouse, type ClickHouse } from "./client";
import { flagAllLinkedCalls, flagLinkedCalls } from "./link-flags";
import { migrateClickHouse } from "./migrate";
import { migration0007 } from "./migrations/0007_calls_has_link";
import type { CallStateV2 } from "./rows-v2";
import { createTableStatements, localName, qualified, withoutColumns, type Placement } from "./schema";
import { CALL_RAW, CALLS_BY_BUCKET, CALLS_BY_MONTH, CALLS_V2, CONCURRENCY_VIEW, V2_TABLES, callsViewStatements, viewStatements } from "./schema-v2";
import { migration0006 } from "./migrations/0006_calls_session_code";
import { CLICKHOUSE_SKIP_REASON, startClickHouse, type TestClickHouse } from "./test-clickhouse";
import { CallWriterV2, openShardsV2, type ShardV2, type WriteStepV2 } from "./writer-v2";

process.env.LOG_LEVEL ??= "silent";
process.env.AUTH_SECRET ??= "link-flags-test-secret-at-least-32-chars!";

/**
 * The stored link flag (calls_v2.has_link, migration 0007; docs/decisions/0034, "A stored
 * link flag (session 16)") on two 18.16 shards: the forwarder flags the calls of the links it
 * copies, under the app's sync lease; a link before its call, a re-sync, a held lease, a
 * pass killed mid-change; and a warehouse of v2 from before the flag migrated and flagged.
 * The reports (hasRecording counts and filters) read it, from the pre-aggregates too.
 */
const ADMIN = { appPks: "all" } as const;
const JAN = Date.UTC(2026, 0, 10) / 1000;
const FEB = Date.UTC(2026, 1, 20) / 1000;

function state(appPk: number, sessionId: string, startAt: number, version: number, over: Partial<CallStateV2> = {}): CallStateV2 {
  return {
    appPk, sessionId, version, startAt, type: "audio", mode: "call", status: "ended", receiverType: "user", platformHasRecording: false,
    audioX1000: 3_000, videoX1000: 0, durationX1000: 3_000, durationSeconds: 180, initiatedAt: startAt, startedAt: startAt, endedAt: startAt + 180,
    initiator: "alice", receiver: "bob", firstSeenMs: startAt * 1000, arrival: version, source: "sync", contentHash: `h-${sessionId}`,
    participants: [
      { seq: 0, uid: "alice", isJoined: true, audioX1000: 3_000, videoX1000: 0, durationX1000: 3_000, state: "left" },
      { seq: 1, uid: "bob", isJoined: true, audioX1000: 3_000, videoX1000: 0, durationX1000: 3_000, state: "left" },
    ],
    ...over,
  };
}

describe.skipIf(CLICKHOUSE_SKIP_REASON)("the stored link flag of calls (ClickHouse schema v2)", () => {
  let cluster: TestClickHouse;
  let databases = 0;
  const closers: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    cluster = await startClickHouse({ shards: 2 });
  }, 120_000);
  afterAll(async () => {
    for (const close of closers) await close();
    await cluster?.stop();
  }, 120_000);

  interface Env {
    database: string;
    ch: ClickHouse;
    shards: ShardV2[];
    writer: CallWriterV2;
    db: Db;
    appPk: number;
    forwarder: Forwarder;
  }

  async function connect(database: string): Promise<Omit<Env, "db" | "appPk" | "forwarder">> {
    const config = cluster.config(database);
    const ch = openClickHouse(config);
    const shards = await openShardsV2(ch, config);
    closers.push(async () => {
      await Promise.all(shards.filter((s) => s.client !== ch).map((s) => s.client.close()));
      await ch.close();
    });
    return { database, ch, shards, writer: new CallWriterV2(ch, shards) };
  }

  async function fresh(): Promise<Env> {
    const database = `links_${++databases}`;
    await migrateClickHouse(cluster.config(database));
    const c = await connect(database);
    const db = openFixtureDb("links");
    const appPk = db.$client.prepare("SELECT pk FROM apps WHERE app_id = 'app-one'").pluck().get() as number;
    const forwarder = new Forwarder(db, clickHouseForwardTarget(c.ch, { db, writer: async () => c.writer }), { minBackoffMs: 50, maxBackoffMs: 200, idleMs: 50 });
    return { ...c, db, appPk, forwarder };
  }

  /** A recording webhook as the ingest stores it (SQLite), for the forwarder to copy. */
  function recordingArrives(e: Env, sessionId: string, startTime = 1): void {
    e.db.$client
      .prepare("INSERT INTO recordings (app_pk, session_id, recording_url, recording_date, duration, start_time, received_ms) VALUES (?, ?, ?, NULL, 60, ?, ?)")
      .run(e.appPk, sessionId, `https://rec.example/${sessionId}/${startTime}`, startTime, Date.now());
  }

  const write = (e: Env, states: CallStateV2[]) => e.writer.write(e.appPk, states.map((s) => ({ sessionId: s.sessionId, version: s.version, next: s })));

  /** Live calls per has_link in the signed rows and in both pre-aggregates: all three must agree. */
  async function flagCounts(ch: ClickHouse): Promise<{ rows: Record<string, number>; months: Record<string, number>; buckets: Record<string, number> }> {
    const t = (n: string) => qualified(ch.placement.database, n);
    const by = async (table: string, count: string) => {
      const rows = await ch.rows<{ f: number; n: number }>(`SELECT has_link AS f, ${count} AS n FROM ${t(table)} GROUP BY f HAVING n != 0 ORDER BY f`);
      return Object.fromEntries(rows.map((r) => [String(r.f), Number(r.n)]));
    };
    return { rows: await by("calls_v2", "sum(sign)"), months: await by("calls_by_month", "sum(calls)"), buckets: await by("calls_by_bucket", "sum(calls)") };
  }

  const hasRecordingBreakdown = async (e: Env, f = {}) => {
    const engine = createClickHouseEngine({ ch: e.ch, db: () => e.db });
    const rows = (await engine.report("breakdowns", filters(f), ADMIN)).data;
    return Object.fromEntries(rows.filter((r) => r.dimension === "hasRecording").map((r) => [r.value, r.calls]));
  };

  it("a recording webhook flags its call: the hasRecording counts and filter change, in the signed rows and the pre-aggregates", async () => {
    const e = await fresh();
    await write(e, [state(e.appPk, "a", JAN, 1_000), state(e.appPk, "b", JAN + 60, 1_000), state(e.appPk, "c", FEB, 1_000)]);
    expect(await hasRecordingBreakdown(e)).toEqual({ true: 0, false: 3 });
    recordingArrives(e, "a");
    await e.forwarder.drain();
    expect(await flagCounts(e.ch)).toEqual({ rows: { 0: 2, 1: 1 }, months: { 0: 2, 1: 1 }, buckets: { 0: 2, 1: 1 } });
    expect(await hasRecordingBreakdown(e)).toEqual({ true: 1, false: 2 });
    // A range of whole months (the pre-aggregate) and one cut inside them (the signed rows at its edges) agree.
    expect(await hasRecordingBreakdown(e, { from: Date.UTC(2026, 0, 1) / 1000, to: Date.UTC(2026, 2, 1) / 1000 })).toEqual({ true: 1, false: 2 });
    expect(await hasRecordingBreakdown(e, { from: JAN + 30, to: FEB + 1, tz: "Asia/Kathmandu" })).toEqual({ true: 0, false: 2 });
    const engine = createClickHouseEngine({ ch: e.ch, db: () => e.db });
    expect((await engine.report("totals", filters({ hasRecording: true }), ADMIN)).current.calls).toBe(1);
    expect((await engine.report("apps", filters({}), ADMIN)).data.find((a) => a.app === "app-one")?.recordings).toBe(1);
    const summary = (await engine.report("recording-summary", filters({}), ADMIN)).data;
    expect({ withLink: summary.withLink, linkNotFlagged: summary.linkNotFlagged, links: summary.links }).toEqual({ withLink: 1, linkNotFlagged: 1, links: 1 });
    // A second link of the same call changes nothing more.
    recordingArrives(e, "a", 2);
    await e.forwarder.drain();
    expect(await flagCounts(e.ch)).toEqual({ rows: { 0: 2, 1: 1 }, months: { 0: 2, 1: 1 }, buckets: { 0: 2, 1: 1 } });
  }, 120_000);

  it("a recording_generated webhook over HTTP: stored by the ingest, forwarded, its call flagged and counted as recorded", async () => {
    const e = await fresh();
    const h = await startHarness();
    try {
      const appPk = h.appPk.acme;
      await e.writer.write(appPk, [state(appPk, "via-http", JAN, 1_000), state(appPk, "other", JAN, 1_000)].map((s) => ({ sessionId: s.sessionId, version: s.version, next: s })));
      expect((await postJson(h.baseUrl, "acme", recordingGenerated({ appId: "acme" }, "via-http", JAN + 5))).status).toBe(200);
      await new Forwarder(h.db, clickHouseForwardTarget(e.ch, { db: h.db, writer: async () => e.writer }), { minBackoffMs: 50 }).drain();
      const engine = createClickHouseEngine({ ch: e.ch, db: () => h.db });
      const f = filters({ hasRecording: true });
      const calls = (await engine.report("calls", f, ADMIN)).data.map((c) => c.sessionId);
      expect(calls).toEqual(["via-http"]);
      expect((await engine.report("totals", filters({}), ADMIN)).current.recordingShare).toBe(0.5);
    } finally {
      await h.close();
    }
  }, 120_000);

  it("a recording before its call is synced: the call's first write sets the flag; a re-sync keeps it", async () => {
    const e = await fresh();
    recordingArrives(e, "early");
    await e.forwarder.drain(); // no call yet: nothing to flag
    expect(await flagCounts(e.ch)).toEqual({ rows: {}, months: {}, buckets: {} });
    await write(e, [state(e.appPk, "early", JAN, 1_000), state(e.appPk, "plain", JAN, 1_000)]);
    expect(await flagCounts(e.ch)).toEqual({ rows: { 0: 1, 1: 1 }, months: { 0: 1, 1: 1 }, buckets: { 0: 1, 1: 1 } });
    // The sync writes the call again (new values; it knows nothing of links): the flag stays, counted once.
    await write(e, [state(e.appPk, "early", JAN, 2_000, { durationSeconds: 240 })]);
    expect(await flagCounts(e.ch)).toEqual({ rows: { 0: 1, 1: 1 }, months: { 0: 1, 1: 1 }, buckets: { 0: 1, 1: 1 } });
    expect(await hasRecordingBreakdown(e)).toEqual({ true: 1, false: 1 });
  }, 120_000);

  it("a forwarder that meets the app's lease held by a sync defers the flag, then lands it once", async () => {
    const e = await fresh();
    await write(e, [state(e.appPk, "held", JAN, 1_000)]);
    const sync = "a-running-sync";
    expect((await takeSyncLease(e.db, e.appPk, sync, 60_000)).acquired).toBe(true);
    recordingArrives(e, "held");
    expect(await e.forwarder.forwardOnce()).toBe(0); // deferred: nothing counted as forwarded
    const cursor = () => e.db.$client.prepare("SELECT last_pk, failures, last_error FROM clickhouse_forwarding WHERE stream = 'recordings'").get() as
      { last_pk: number; failures: number; last_error: string | null } | undefined;
    expect(cursor()?.last_pk ?? 0).toBe(0);
    expect(cursor()?.failures ?? 0).toBe(0); // a wait, not a failure
    expect(await flagCounts(e.ch)).toEqual({ rows: { 0: 1 }, months: { 0: 1 }, buckets: { 0: 1 } });
    await releaseSyncLease(e.db, e.appPk, sync);
    await new Promise((r) => setTimeout(r, 60)); // the deferral's pause
    expect(await e.forwarder.forwardOnce()).toBe(1);
    expect(await flagCounts(e.ch)).toEqual({ rows: { 1: 1 }, months: { 1: 1 }, buckets: { 1: 1 } });
    expect(cursor()?.last_pk).toBe(1);
    // Once: the state +1, its cancel row, the flagged state; one call_raw version more.
    const t = (n: string) => qualified(e.ch.placement.database, n);
    const rows = await e.ch.rows<{ n: number }>(`SELECT count() AS n FROM ${t("calls_v2")} WHERE session_id = 'held'`);
    expect(Number(rows[0].n)).toBe(3);
    const versions = await e.ch.rows<{ v: number }>(`SELECT DISTINCT version AS v FROM ${t("call_raw")} WHERE session_id = 'held' ORDER BY v`);
    expect(versions.map((r) => Number(r.v))).toEqual([1_000, 1_001]);
    // The same links forwarded again (a lost answer) flag nothing twice.
    await flagLinkedCalls(e.writer, e.ch, e.appPk, ["held"]);
    expect(Number((await e.ch.rows<{ n: number }>(`SELECT count() AS n FROM ${t("calls_v2")} WHERE session_id = 'held'`))[0].n)).toBe(3);
  }, 120_000);

  /** A link-flag pass over `sessions` in a child process, SIGKILLed when its writer reaches `step`. */
  async function passKilledAt(e: Env, sessions: string[], step: WriteStepV2): Promise<void> {
    const { signal, out } = await runWriterChild({ ...cluster.env(e.database), APP_PK: String(e.appPk), FLAG_SESSIONS: JSON.stringify(sessions), KILL_STEP: step });
    expect({ signal, out }).toEqual({ signal: "SIGKILL", out: "" });
    await insertsSettled(e.shards.map((sh) => sh.client));
  }

  /** The links of k1 and k2 in ClickHouse without their flags (a forwarder without the pass). */
  const linksWithoutFlags = (e: Env) =>
    clickHouseForwardTarget(e.ch).writeRecordings([
      { pk: 1, appPk: e.appPk, sessionId: "k1", recordingUrl: "https://rec.example/k1", recordingDate: null, duration: 1, startTime: 1, receivedMs: 1 },
      { pk: 2, appPk: e.appPk, sessionId: "k2", recordingUrl: "https://rec.example/k2", recordingDate: null, duration: 1, startTime: 1, receivedMs: 1 },
    ]);

  it("a pass killed mid-change of one call, then a pass over it and an unflagged call: both end flagged, once", async () => {
    const e = await fresh();
    await write(e, [state(e.appPk, "k1", JAN, 1_000), state(e.appPk, "k2", FEB, 1_000)]);
    await linksWithoutFlags(e);
    // k1's flagged state is in call_raw, its signed rows are not; k2 is untouched: the next pass changes k2 and must complete k1.
    await passKilledAt(e, ["k1"], "calls");
    expect(await flagLinkedCalls(e.writer, e.ch, e.appPk, ["k1", "k2"])).toBe(1);
    expect(await flagCounts(e.ch)).toEqual({ rows: { 1: 2 }, months: { 1: 2 }, buckets: { 1: 2 } });
  }, 120_000);

  const STEPS: WriteStepV2[] = ["raw", "calls", "participants", "done"];
  for (const step of STEPS) {
    it(`a link-flag pass SIGKILLed before "${step}" is completed by the next pass: the call counted once, flagged`, async () => {
      const e = await fresh();
      await write(e, [state(e.appPk, "k1", JAN, 1_000), state(e.appPk, "k2", FEB, 1_000)]);
      await linksWithoutFlags(e);
      await passKilledAt(e, ["k1", "k2"], step);
      await flagLinkedCalls(new CallWriterV2(e.ch, e.shards), e.ch, e.appPk, ["k1", "k2"]);
      expect(await flagCounts(e.ch)).toEqual({ rows: { 1: 2 }, months: { 1: 2 }, buckets: { 1: 2 } });
      const t = (n: string) => qualified(e.ch.placement.database, n);
      const people = await e.ch.rows<{ n: number }>(`SELECT sum(sign) AS n FROM ${t("participants_v2")}`);
      expect(Number(people[0].n)).toBe(4);
    }, 120_000);
  }

  it("migration 0007 brings a v2 warehouse from before the flag up (every shard, twice is a no-op), and the pass flags its linked calls", async () => {
    const database = `links_${++databases}`;
    const config = cluster.config(database);
    // The warehouse as migrations 0005 and 0006 left it: no has_link anywhere, the calls views without it.
    await migrateClickHouse(config);
    const p: Placement = { database, cluster: config.cluster };
    const c = await connect(database);
    for (const s of c.shards) {
      for (const name of ["calls_by_bucket_mv", "calls_by_month_mv", "participants_by_month_mv", "participants_by_month_dims_mv", CONCURRENCY_VIEW, ...V2_TABLES.map((t) => t.name)]) {
        await s.client.command(`DROP TABLE IF EXISTS ${qualified(database, localName(p, name))}`);
        await s.client.command(`DROP TABLE IF EXISTS ${qualified(database, name)}`);
      }
      const before = (t: (typeof V2_TABLES)[number]) =>
        t === CALLS_V2 || t === CALL_RAW ? withoutColumns(t, ["has_link"])
        : t === CALLS_BY_BUCKET || t === CALLS_BY_MONTH ? { ...withoutColumns(t, ["has_link"]), orderBy: t.orderBy.replace(", has_link", "") }
        : t;
      for (const t of V2_TABLES) for (const st of createTableStatements(p, before(t))) await s.client.command(st);
      const calls = callsViewStatements(p);
      for (const v of viewStatements(p)) await s.client.command(calls.includes(v) ? v.replace(/, has_link/g, "") : v);
      for (const st of migration0006.statements(p, false)) await s.client.command(typeof st === "string" ? st : st.sql);
    }
    // Old rows: a call written as the old writers did (no has_link field), and a link for it.
    const t = (n: string) => qualified(database, n);
    const old = { sign: 1, version: 5, app_pk: 1, start_at: JAN, session_id: "old", type: "audio", type_other: "", mode: "call", mode_other: "", status: "ended", status_other: "",
      receiver_type: "user", receiver_type_other: "", platform_has_recording: 0, total_audio_minutes_x1000: 1_000, total_video_minutes_x1000: 0,
      total_duration_minutes_x1000: 1_000, duration_seconds: 60, total_participants: 0, initiated_at: JAN, started_at: JAN, ended_at: JAN + 60,
      initiator: null, receiver: null, arrival: 5 };
    await c.ch.command(`INSERT INTO ${t("calls_v2")} FORMAT JSONEachRow ${JSON.stringify(old)}`);
    await c.ch.command(`INSERT INTO ${t("call_raw")} (app_pk, session_id, version, updated_ms, deleted, source, start_at, first_seen_ms, arrival, previous, type, mode, status, receiver_type, platform_has_recording, total_audio_minutes_x1000, total_duration_minutes_x1000, duration_seconds, initiated_at, started_at, ended_at) VALUES (1, 'old', 5, 5, 0, 'sync', ${JAN}, 0, 5, '', 'audio', 'call', 'ended', 'user', 0, 1000, 1000, 60, ${JAN}, ${JAN}, ${JAN + 60})`);
    await clickHouseForwardTarget(c.ch).writeRecordings([{ pk: 1, appPk: 1, sessionId: "old", recordingUrl: "https://rec.example/old", recordingDate: null, duration: 1, startTime: 1, receivedMs: 1 }]);
    // Migration 0007 on every shard, then again.
    for (const s of c.shards) {
      for (let i = 0; i < 2; i++) {
        for (const st of migration0007.statements(p, false)) {
          if (typeof st === "string") await s.client.command(st);
          else if ((await s.client.rows(st.doneIf)).length === 0) await s.client.command(st.sql);
        }
      }
    }
    expect(await flagCounts(c.ch)).toEqual({ rows: { 0: 1 }, months: { 0: 1 }, buckets: { 0: 1 } });
    expect(await flagAllLinkedCalls(c.writer, c.ch, [1])).toBe(1);
    expect(await flagAllLinkedCalls(c.writer, c.ch, [1])).toBe(0);
    expect(await flagCounts(c.ch)).toEqual({ rows: { 1: 1 }, months: { 1: 1 }, buckets: { 1: 1 } });
  }, 180_000);
});
