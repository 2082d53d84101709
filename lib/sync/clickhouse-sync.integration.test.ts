import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLICKHOUSE_SKIP_REASON } from "@/lib/clickhouse/test-clickhouse";
import { killMidRun } from "@/lib/testing/kill-mid-run";

process.env.AUTH_SECRET ??= "integration-test-secret-at-least-32-characters";
process.env.LOG_LEVEL ??= "silent";

const { openDatabase } = await import("@/db/client");
const { addApp, getAppById } = await import("@/lib/apps/registry");
const { resetEnvForTests } = await import("@/lib/config/env");
const { clickhouse, closeClickHouse } = await import("@/lib/clickhouse/client");
const { migrateClickHouse } = await import("@/lib/clickhouse/migrate");
const { startClickHouse } = await import("@/lib/clickhouse/test-clickhouse");
const { restartable } = await import("@/lib/clickhouse/test-restart");
const { spawnEmulator } = await import("@/lib/emulator/test-emulator");
const { syncApp } = await import("./sync-app");
const { ClickHouseCalls } = await import("./clickhouse-sink");
const { parseCallRecord } = await import("@/lib/platform/call-record");
const { contentHash } = await import("./pending-rows");
const { createMemoryEngine } = await import("@/lib/analytics/engines/memory");
const { createClickHouseEngine } = await import("@/lib/analytics/engines/clickhouse");
const { filters, MAX_PER_PAGE } = await import("@/lib/analytics/filters");
const { allCalls } = await import("@/lib/analytics/test-fixtures");
type Engine = ReturnType<typeof createClickHouseEngine>;
type Filters = ReturnType<typeof filters>;
type Emu = Awaited<ReturnType<typeof spawnEmulator>>;
type Db = ReturnType<typeof openDatabase>;
type TestCh = Awaited<ReturnType<typeof startClickHouse>>;

/**
 * The sync in ClickHouse mode, over real HTTP on both sides: the emulator upstream and
 * a two-shard cluster of real clickhouse-server processes (Distributed tables). Each test
 * has its own ClickHouse database and SQLite file. The expected warehouse is the
 * emulator's truth; "counted once" is read the way reports read (newest version of each
 * call, tombstones dropped).
 */
const SEED = 23;
const ALPHA = 2400;
const BETA = 1000;
let emu: Emu;
let ch: TestCh;
const opened: Array<{ db: Db; dir: string }> = [];
const restarted: Array<{ stop(): Promise<void> }> = [];

const fastClient = { timeoutMs: 400, maxAttempts: 10, baseBackoffMs: 20, maxBackoffMs: 200, maxRetryAfterMs: 1_000 };

interface Totals {
  calls: number;
  participants: number;
  audio: number;
  video: number;
  ongoing: number;
}

async function truth(appId: string): Promise<Totals> {
  const t: Totals = { calls: 0, participants: 0, audio: 0, video: 0, ongoing: 0 };
  for (const c of await emu.admin.truth(appId)) {
    t.calls++;
    t.participants += ((c.participants as unknown[] | undefined) ?? []).length;
    t.audio += Number(c.totalAudioMinutes ?? 0);
    t.video += Number(c.totalVideoMinutes ?? 0);
    if (c.status === "ongoing") t.ongoing++;
  }
  return t;
}

/** What reports see in ClickHouse for one app: each call's newest version, once. */
async function inClickHouse(appPk: number): Promise<Totals & { versions: number }> {
  const [r] = await clickhouse().rows<Record<string, number>>(
    `SELECT count() AS calls, sum(parts) AS participants, sum(audio) AS audio, sum(video) AS video,
       countIf(st = 'ongoing') AS ongoing, sum(versions) AS versions
     FROM (SELECT session_id, argMax(length(p_uid), version) AS parts, argMax(total_audio_minutes_x1000, version) AS audio,
             argMax(total_video_minutes_x1000, version) AS video, argMax(status, version) AS st,
             argMax(deleted, version) AS del, count() AS versions
           FROM calls WHERE app_pk = ${appPk} GROUP BY session_id)
     WHERE del = 0`,
  );
  return {
    calls: Number(r.calls), participants: Number(r.participants), audio: Number(r.audio) / 1000, video: Number(r.video) / 1000,
    ongoing: Number(r.ongoing), versions: Number(r.versions),
  };
}

/**
 * What schema v2 holds for one app, read as its reports read it: signed sums, no FINAL
 * (lib/clickhouse/schema-v2.ts); `miscounted`: calls whose signs do not sum to 0 or 1.
 */
async function inClickHouseV2(appPk: number): Promise<Totals & { miscounted: number }> {
  const [r] = await clickhouse().rows<Record<string, number>>(
    `SELECT sum(sign) AS calls, sum(sign * total_audio_minutes_x1000) AS audio, sum(sign * total_video_minutes_x1000) AS video,
       sum(sign * (status = 'ongoing')) AS ongoing, (SELECT sum(sign) FROM participants_v2 WHERE app_pk = ${appPk}) AS participants,
       (SELECT countIf(n NOT IN (0, 1)) FROM (SELECT sum(sign) AS n FROM calls_v2 WHERE app_pk = ${appPk} GROUP BY session_id)) AS miscounted
     FROM calls_v2 WHERE app_pk = ${appPk}`,
  );
  return {
    calls: Number(r.calls), participants: Number(r.participants), audio: Number(r.audio) / 1000, video: Number(r.video) / 1000,
    ongoing: Number(r.ongoing), miscounted: Number(r.miscounted),
  };
}

/** Both schemas hold exactly the emulator's calls (`v1`: false when the sync wrote v2 alone, and v1 must be empty). */
async function expectSame(appPk: number, t: Totals, v1 = true): Promise<void> {
  if (v1) {
    const w = await inClickHouse(appPk);
    expect(w.calls).toBe(t.calls);
    expect(w.participants).toBe(t.participants);
    expect(w.audio).toBeCloseTo(t.audio, 3);
    expect(w.video).toBeCloseTo(t.video, 3);
    expect(w.ongoing).toBe(t.ongoing);
  } else {
    expect((await inClickHouse(appPk)).versions).toBe(0);
  }
  const v2 = await inClickHouseV2(appPk);
  expect(v2.miscounted).toBe(0);
  expect(v2.calls).toBe(t.calls);
  expect(v2.participants).toBe(t.participants);
  expect(v2.audio).toBeCloseTo(t.audio, 3);
  expect(v2.video).toBeCloseTo(t.video, 3);
  expect(v2.ongoing).toBe(t.ongoing);
}

let databases = 0;
/** A fresh SQLite file and ClickHouse database, this process's warehouse from now on. */
async function freshWarehouse(): Promise<{ db: Db; file: string; env: Record<string, string> }> {
  const name = `sync_test_${++databases}`;
  const env = ch.env(name);
  Object.assign(process.env, env);
  resetEnvForTests();
  await closeClickHouse();
  await migrateClickHouse(ch.config(name));
  const dir = mkdtempSync(path.join(tmpdir(), "callboard-ch-sync-"));
  const file = path.join(dir, "warehouse.db");
  const db = openDatabase(file);
  opened.push({ db, dir });
  return { db, file, env };
}

async function register(db: Db, appId: string) {
  const info = emu.apps.find((a) => a.appId === appId)!;
  return await addApp(db, { appId, name: appId, region: info.region, apiKey: info.apiKey, callsUrl: info.callsUrl });
}

/** Every call of the list, in the engine's order: app/session id of each. */
const listed = async (engine: Engine, f: Filters) => (await allCalls(engine, f)).map((r) => `${r.app}/${r.sessionId}`);

const sqliteCalls = (db: Db) => db.$client.prepare("SELECT count(*) FROM calls").pluck().get() as number;

/** The sync writing schema v1 beside v2 (WRITE_V1_FACTS on, not the default): the tests below check both schemas. */
const dual = { clickHouse: { writeV1Facts: true } };

describe.skipIf(CLICKHOUSE_SKIP_REASON)("sync into ClickHouse (two shards)", { timeout: 180_000 }, () => {
  beforeAll(async () => {
    [emu, ch] = await Promise.all([
      spawnEmulator({ seed: SEED, now: 1_780_000_000, apps: [{ appId: "alpha", count: ALPHA }, { appId: "beta", count: BETA }] }),
      startClickHouse({ shards: 2 }),
    ]);
  });
  afterAll(async () => {
    await closeClickHouse();
    await emu?.stop();
    for (const r of restarted) await r.stop();
    await ch?.stop();
    for (const { db, dir } of opened) {
      db.$client.close();
      rmSync(dir, { recursive: true, force: true });
    }
    delete process.env.CLICKHOUSE_URL;
    delete process.env.CLICKHOUSE_CLUSTER;
    resetEnvForTests();
  }, 300_000); // two shards with thousands of small parts stopped and removed, on a box at load 15+
  it("stores exactly the emulator's calls despite upstream faults, none in SQLite; a second run writes nothing", async () => {
    const t = await truth("alpha");
    const { db } = await freshWarehouse();
    const app = await register(db, "alpha");
    await emu.admin.setFaults({
      seed: 5,
      rules: [
        { kind: "429", route: "list", everyNth: 7, times: 2 },
        { kind: "500", route: "list", everyNth: 5, times: 3 },
        { kind: "truncate", route: "list", everyNth: 4, times: 2 },
        { kind: "reset", route: "list", everyNth: 11, times: 1 },
      ],
    });
    try {
      const r = await syncApp(db, (await getAppById(db, "alpha"))!, { trigger: "test", ...dual, perPage: 200, batchSize: 700, client: fastClient });
      expect(r.error).toBeNull();
      expect(r).toMatchObject({ status: "succeeded", inserted: ALPHA, updated: 0 });
    } finally {
      await emu.admin.clearFaults();
    }
    await expectSame(app.pk, t);
    expect(sqliteCalls(db)).toBe(0);
    // The run's bookkeeping stays in SQLite.
    expect(db.$client.prepare("SELECT status, inserted FROM sync_runs").all()).toEqual([{ status: "succeeded", inserted: ALPHA }]);

    // Unchanged calls are recognised from ClickHouse's answer and not written again.
    const again = await syncApp(db, (await getAppById(db, "alpha"))!, { trigger: "test", ...dual, full: true, perPage: 500, client: fastClient });
    expect(again.error).toBeNull();
    expect(again).toMatchObject({ status: "succeeded", inserted: 0, updated: 0, unchanged: ALPHA, kind: "full" });
    const incremental = await syncApp(db, (await getAppById(db, "alpha"))!, { trigger: "test", ...dual, perPage: 500, client: fastClient });
    expect(incremental).toMatchObject({ status: "succeeded", inserted: 0, updated: 0, stoppedEarly: true });
    expect((await inClickHouse(app.pk)).versions).toBe(ALPHA);
  });

  it("writes a changed call as a new version that replaces the old one, participants included", async () => {
    const { db } = await freshWarehouse();
    const app = await register(db, "alpha");
    await syncApp(db, (await getAppById(db, "alpha"))!, { trigger: "test", ...dual, client: fastClient });
    const before = await inClickHouse(app.pk);
    expect(before.ongoing).toBeGreaterThan(0);
    await emu.admin.advance({ appId: "alpha", seconds: 7200, endOngoing: true });
    const t = await truth("alpha");
    expect(t.ongoing).toBe(0);
    const r = await syncApp(db, (await getAppById(db, "alpha"))!, { trigger: "test", ...dual, client: fastClient });
    expect(r.status).toBe("succeeded");
    expect(r.updated + r.refreshed).toBeGreaterThanOrEqual(before.ongoing);
    const after = await inClickHouse(app.pk);
    // More rows than calls (the old versions are still there until a merge), each call counted once.
    expect(after.versions).toBeGreaterThan(after.calls);
    await expectSame(app.pk, t);
    // A new version keeps the call's arrival (its place among calls with equal sort keys).
    const [arrivals] = await clickhouse().rows<{ moved: number; unset: number }>(
      `SELECT countIf(n > 1) AS moved, countIf(a = 0) AS unset FROM (SELECT uniqExact(arrival) AS n, min(arrival) AS a FROM calls WHERE app_pk = ${app.pk} GROUP BY session_id)`,
    );
    expect(arrivals).toEqual({ moved: 0, unset: 0 });
  });

  it("keeps the later record of a call staged twice in one batch (it changed between two pages)", async () => {
    const { db } = await freshWarehouse();
    const app = await register(db, "beta");
    const [record] = await emu.admin.truth("beta");
    const row = (status: string, audio: number) => {
      const raw = { ...record, status, totalAudioMinutes: audio };
      const parsed = parseCallRecord(raw);
      if (!parsed.ok) throw new Error(parsed.reason);
      const rawJson = JSON.stringify(raw);
      return { call: parsed.call, rawJson, hash: contentHash(rawJson), participantExtras: [] };
    };
    const sink = new ClickHouseCalls(clickhouse(), db, app.pk, { writeV1Facts: true });
    sink.stage([row("ongoing", 1.25)]);
    sink.stage([row("ended", 9.5)]);
    expect(await sink.commit()).toMatchObject({ inserted: 1, updated: 1 });
    const [stored] = await sink.findMany([String(record.sessionId)]);
    expect(stored).toMatchObject({ status: "ended" });
    expect(await inClickHouse(app.pk)).toMatchObject({ calls: 1, audio: 9.5, versions: 2 });
    expect(await inClickHouseV2(app.pk)).toMatchObject({ calls: 1, audio: 9.5, miscounted: 0 });
    const arrivals = await clickhouse().rows<{ arrival: number }>(`SELECT DISTINCT arrival FROM calls WHERE app_pk = ${app.pk}`);
    expect(arrivals).toHaveLength(1);
  });

  it("converges with no double counting after a sync process is SIGKILLed mid-way", async () => {
    const t = await truth("beta");
    const { db, file, env } = await freshWarehouse();
    const app = await register(db, "beta");
    const { out } = await killMidRun(
      path.join(import.meta.dirname, "test-sync-child.ts"),
      { ...process.env, ...env, DB_FILE: file, APP_ID: "beta", PAGE_DELAY_MS: "80", WRITE_V1_FACTS: "1" },
      /page 4\n/,
    );
    expect(out).not.toMatch(/done/);
    const partial = await inClickHouse(app.pk);
    // Pages of 100, batches of 150: the first batch (pages 1–2) was committed before page 4 was reported.
    expect(partial.calls).toBeGreaterThanOrEqual(200);
    expect(partial.calls).toBeLessThan(BETA);

    const r = await syncApp(db, (await getAppById(db, "beta"))!, { trigger: "test", ...dual, client: fastClient });
    expect(r.status).toBe("succeeded");
    await expectSame(app.pk, t);
    const again = await syncApp(db, (await getAppById(db, "beta"))!, { trigger: "test", ...dual, full: true, client: fastClient });
    expect(again).toMatchObject({ inserted: 0, updated: 0, unchanged: BETA });
    await expectSame(app.pk, t);
    expect(sqliteCalls(db)).toBe(0);
  });

  it("lists calls with equal keys in the order a SQLite-mode warehouse synced from the same upstream does, re-syncs included", async () => {
    // SQLite mode (no CLICKHOUSE_URL while it syncs): pks number the calls as the sync stages them.
    const inSqliteMode = async (run: () => Promise<void>) => {
      const saved = { url: process.env.CLICKHOUSE_URL, cluster: process.env.CLICKHOUSE_CLUSTER };
      delete process.env.CLICKHOUSE_URL;
      delete process.env.CLICKHOUSE_CLUSTER;
      resetEnvForTests();
      try {
        await run();
      } finally {
        if (saved.url !== undefined) process.env.CLICKHOUSE_URL = saved.url;
        if (saved.cluster !== undefined) process.env.CLICKHOUSE_CLUSTER = saved.cluster;
        resetEnvForTests();
      }
    };
    const dir = mkdtempSync(path.join(tmpdir(), "callboard-sqlite-sync-"));
    const local = openDatabase(path.join(dir, "warehouse.db"));
    opened.push({ db: local, dir });
    const syncBoth = async (db: Db) => {
      for (const appId of ["alpha", "beta"]) expect((await syncApp(db, (await getAppById(db, appId))!, { trigger: "test", ...dual, perPage: 300, client: fastClient })).status).toBe("succeeded");
    };
    await register(local, "alpha");
    await register(local, "beta");
    await inSqliteMode(() => syncBoth(local));
    expect(sqliteCalls(local)).toBeGreaterThan(ALPHA);
    // ClickHouse mode, the same upstream, the same apps in the same order.
    const { db } = await freshWarehouse();
    await register(db, "alpha");
    await register(db, "beta");
    await syncBoth(db);
    expect(sqliteCalls(db)).toBe(0);
    // The platform moves on (ongoing calls end, new calls), and both sync again: changed calls keep their place.
    await emu.admin.advance({ appId: "alpha", seconds: 3600, newCalls: 60, endOngoing: true });
    await inSqliteMode(() => syncBoth(local));
    await syncBoth(db);

    const mem = createMemoryEngine({ db: () => local });
    const ch = createClickHouseEngine({ db: () => db });
    let longestRun = 0;
    for (const sort of ["start", "duration", "participants", "minutes"] as const) {
      for (const order of ["asc", "desc"] as const) {
        const f = filters({ sort, order });
        const want = await listed(mem, f);
        expect(want).toHaveLength(sqliteCalls(local));
        expect(await listed(ch, f), `${sort} ${order}`).toEqual(want);
        if (sort === "minutes" && order === "asc") {
          const minutes = (await mem.report("calls", { ...f, perPage: MAX_PER_PAGE }, { appPks: "all" })).data.map((r) => r.totalAudioMinutes + r.totalVideoMinutes);
          longestRun = minutes.filter((m) => m === 0).length;
        }
      }
    }
    // Hundreds of calls share 0 minutes: a page edge inside their run lists the same calls on both.
    expect(longestRun).toBeGreaterThan(100);
  });

  it("fails clearly while a shard is down (no password in the error) and converges once it is back", async () => {
    const t = await truth("beta");
    const { db } = await freshWarehouse();
    const app = await register(db, "beta");
    const shard2 = restartable(ch, 1);
    restarted.push(shard2);
    await shard2.down();
    try {
      const r = await syncApp(db, (await getAppById(db, "beta"))!, { trigger: "test", ...dual, client: fastClient });
      expect(r.status).toBe("failed");
      expect(r.error).toMatch(/ClickHouse/);
      expect(r.error).not.toContain(ch.password);
      const run = db.$client.prepare("SELECT status, error FROM sync_runs WHERE pk = ?").get(r.runPk) as { status: string; error: string };
      expect(run.status).toBe("failed");
      expect(run.error).not.toContain(ch.password);
    } finally {
      await shard2.up();
    }
    const r = await syncApp(db, (await getAppById(db, "beta"))!, { trigger: "test", ...dual, client: fastClient });
    expect(r.status).toBe("succeeded");
    await expectSame(app.pk, t);
  });

  describe("writing schema v2 alone (WRITE_V1_FACTS off)", () => {
    const v2Only = { clickHouse: { writeV1Facts: false } };

    it("stores exactly the emulator's calls, recognises unchanged ones and replaces changed ones, with nothing in v1", async () => {
      const { db } = await freshWarehouse();
      const app = await register(db, "alpha");
      const t = await truth("alpha"); // earlier tests moved the emulator on: more than ALPHA calls
      const first = await syncApp(db, (await getAppById(db, "alpha"))!, { trigger: "test", perPage: 300, batchSize: 700, client: fastClient, ...v2Only });
      expect(first.error).toBeNull();
      expect(first).toMatchObject({ status: "succeeded", inserted: t.calls, updated: 0 });
      await expectSame(app.pk, t, false);
      const again = await syncApp(db, (await getAppById(db, "alpha"))!, { trigger: "test", full: true, perPage: 500, client: fastClient, ...v2Only });
      expect(again).toMatchObject({ status: "succeeded", inserted: 0, updated: 0, unchanged: t.calls });
      const ongoing = (await inClickHouseV2(app.pk)).ongoing;
      expect(ongoing).toBeGreaterThan(0);
      await emu.admin.advance({ appId: "alpha", seconds: 7200, newCalls: 40, endOngoing: true });
      const changed = await syncApp(db, (await getAppById(db, "alpha"))!, { trigger: "test", client: fastClient, ...v2Only });
      expect(changed.status).toBe("succeeded");
      expect(changed.updated + changed.refreshed).toBeGreaterThanOrEqual(ongoing);
      await expectSame(app.pk, await truth("alpha"), false);
      // Every replaced state left its cancel row: more rows than calls until a merge.
      const [rows] = await clickhouse().rows<{ n: number; cancels: number }>(`SELECT count() AS n, countIf(sign = -1) AS cancels FROM calls_v2 WHERE app_pk = ${app.pk}`);
      expect(Number(rows.cancels)).toBeGreaterThanOrEqual(ongoing);
    });

    it("converges with no double counting after a sync process is SIGKILLed mid-way", async () => {
      const t = await truth("beta");
      const { db, file, env } = await freshWarehouse();
      const app = await register(db, "beta");
      const { out } = await killMidRun(
        path.join(import.meta.dirname, "test-sync-child.ts"),
        { ...process.env, ...env, DB_FILE: file, APP_ID: "beta", PAGE_DELAY_MS: "80", WRITE_V1_FACTS: "0" },
        /page 4\n/,
      );
      expect(out).not.toMatch(/done/);
      const partial = await inClickHouseV2(app.pk);
      expect(partial.calls).toBeGreaterThanOrEqual(200);
      expect(partial.calls).toBeLessThan(BETA);
      const r = await syncApp(db, (await getAppById(db, "beta"))!, { trigger: "test", client: fastClient, ...v2Only });
      expect(r.status).toBe("succeeded");
      await expectSame(app.pk, t, false);
      const again = await syncApp(db, (await getAppById(db, "beta"))!, { trigger: "test", full: true, client: fastClient, ...v2Only });
      expect(again).toMatchObject({ inserted: 0, updated: 0, unchanged: BETA });
      await expectSame(app.pk, t, false);
    });
  });
});
