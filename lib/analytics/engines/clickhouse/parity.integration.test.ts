import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { filters, type AnalyticsEngine, type Filters, type ReportName, type Scope } from "@/lib/analytics";
import { createMemoryEngine } from "@/lib/analytics/engines/memory";
import { measure } from "@/lib/alerts/metrics";
import { METRIC_NAMES } from "@/lib/alerts/schema";
import { applyMigrations, migrateClickHouse, openClickHouse, type ClickHouse } from "@/lib/clickhouse";
import { CLICKHOUSE_SKIP_REASON, startClickHouse, type TestClickHouse } from "@/lib/clickhouse/test-clickhouse";
import { openChdb } from "@/lib/clickhouse/test-chdb";
import { createClickHouseEngine } from "./engine";
import { allCalls, collect, csvText } from "./test-parity-answers";
import { churnV2, holdMerges, type Churned } from "./test-parity-churn";
import { forHost } from "@/lib/clickhouse/config";
import { CallWriterV2, openShardsV2, type ShardV2 } from "@/lib/clickhouse/writer-v2";
import { buildWarehouse, MONTH_EDGE, NOW, ODD_UIDS, TIE_START, type Warehouse } from "./test-parity-fixture";

process.env.AUTH_SECRET ??= "parity-test-secret-at-least-32-characters!";

/**
 * The parity suite: one synced warehouse (test-parity-fixture.ts) answered by the in-memory
 * engine over SQLite and by the ClickHouse engine over (1) a two-shard Distributed cluster
 * of real clickhouse-server processes and (2) chdb, a current ClickHouse in-process —
 * every report, under every filter set below, compared exactly through the engine
 * interface: the same rows in the same order (rows with equal sort keys included: the
 * fixture holds long runs of them across page edges), the same numbers (minutes to the
 * thousandth), the same CSV bytes. Alerts' metrics and statements' reports (apps,
 * participants by minutes, over a month in a zone) read the same interface, and are
 * compared too.
 */

const DB = "callboard_parity";
const ADMIN: Scope = { appPks: "all" };
const d = (iso: string) => Date.parse(iso) / 1000;

interface Case {
  name: string;
  f: Partial<Filters>;
  scope?: "viewer";
  /** Run every sort key, order and a deep page of the calls list (slow: a few cases). */
  allSorts?: boolean;
  /** The filters match nothing (every other case must match calls: a comparison of two empty answers proves little). */
  empty?: boolean;
}

const CASES: Case[] = [
  { name: "everything", f: {}, allSorts: true },
  { name: "one app", f: { apps: ["alpha"] } },
  { name: "two apps, video", f: { apps: ["alpha", "beta"], type: "video" }, allSorts: true },
  { name: "meetings that ended", f: { mode: "meet", status: "ended" } },
  // participants_by_month_dims (migration 0012) for the whole months; churned calls passed through the other type.
  { name: "video groups, all time", f: { type: "video", receiverType: "group" } },
  { name: "video that ended, whole months and edges in Kathmandu (+05:45)", f: { type: "video", status: "ended", from: NOW - 100 * 86_400 + 437, to: NOW - 5 * 86_400, tz: "Asia/Kathmandu" } },
  { name: "groups with a recording", f: { receiverType: "group", hasRecording: true } },
  { name: "no recording, two participants", f: { hasRecording: false, participantsCount: 2 } },
  { name: "a hostile uid of the emulator", f: { uid: "o'brien" }, allSorts: true },
  { name: "an odd uid with SQL in it", f: { uid: ODD_UIDS[0] } },
  { name: "a uid with a NUL", f: { uid: ODD_UIDS[1] } },
  { name: "a uid with backslashes", f: { uid: ODD_UIDS[2] } },
  { name: "a uid nobody has", f: { uid: "nobody-at-all" }, empty: true },
  { name: "a person search: part of a hostile uid, other case", f: { person: "O'BR" } },
  { name: "a person search within a uid's calls", f: { uid: "o'brien", person: "e" }, allSorts: true },
  { name: "December in Kolkata (+05:30)", f: { from: d("2025-11-30T18:30:00Z"), to: d("2025-12-31T18:30:00Z"), tz: "Asia/Kolkata" } },
  { name: "Kathmandu (+05:45), no window", f: { tz: "Asia/Kathmandu" } },
  { name: "Berlin's DST end day", f: { from: d("2025-10-25T22:00:00Z"), to: d("2025-10-26T23:00:00Z"), tz: "Europe/Berlin" } },
  // Edges inside a 15-minute bucket: the daily series reads whole buckets from calls_by_bucket and the edges from the signed rows.
  { name: "edges mid-bucket in Kathmandu (+05:45)", f: { from: NOW - 50 * 86_400 + 437, to: NOW - 3 * 86_400 + 1111, tz: "Asia/Kathmandu" } },
  // Totals of a 30-day window and the 30 days before it (session 18): whole 15-minute buckets from calls_by_bucket, only the sub-quarter edges from the signed rows.
  { name: "30 days to a mid-quarter instant, in Kathmandu (+05:45)", f: { from: NOW - 31 * 86_400 + 611, to: NOW - 86_400 + 611, tz: "Asia/Kathmandu" } },
  { name: "Berlin's DST end day, edges mid-bucket", f: { from: d("2025-10-25T22:07:13Z"), to: d("2025-10-26T22:58:01Z"), tz: "Europe/Berlin" } },
  { name: "New York's DST start week", f: { from: d("2026-03-05T05:00:00Z"), to: d("2026-03-12T04:00:00Z"), tz: "America/New_York" } },
  { name: "Lord Howe (30-minute DST)", f: { from: d("2026-03-01T00:00:00Z"), to: d("2026-04-15T00:00:00Z"), tz: "Australia/Lord_Howe" } },
  { name: "from only", f: { from: NOW - 40 * 86_400 } },
  { name: "to only, Chatham (+12:45/+13:45)", f: { to: NOW - 200 * 86_400, tz: "Pacific/Chatham" } },
  { name: "everything at once", f: { apps: ["alpha"], type: "audio", mode: "call", status: "ended", receiverType: "user", from: d("2025-09-01T00:00:00Z"), to: NOW } },
  { name: "a statement's month: March 2026 in Kathmandu", f: { from: d("2026-02-28T18:15:00Z"), to: d("2026-03-31T18:15:00Z"), tz: "Asia/Kathmandu", sort: "minutes" } },
  { name: "around a month boundary calls moved across, in Kolkata", f: { from: MONTH_EDGE - 2 * 86_400, to: MONTH_EDGE + 2 * 86_400, tz: "Asia/Kolkata" }, allSorts: true },
  { name: "January, the month calls moved into last", f: { from: MONTH_EDGE - 31 * 86_400, to: MONTH_EDGE, sort: "minutes" } },
  { name: "drill-down: Thursdays 10:00 in Kathmandu (+05:45), a month", f: { weekday: 4, hour: 10, from: d("2026-02-28T18:15:00Z"), to: d("2026-03-31T18:15:00Z"), tz: "Asia/Kathmandu" }, allSorts: true },
  { name: "drill-down: Sundays (the spring-forward day) over New York's DST start week", f: { weekday: 0, from: d("2026-03-05T05:00:00Z"), to: d("2026-03-12T04:00:00Z"), tz: "America/New_York" } },
  { name: "drill-down: Sundays (a weekday alone) on Berlin's DST end day", f: { weekday: 0, from: d("2025-10-25T22:00:00Z"), to: d("2025-10-26T23:00:00Z"), tz: "Europe/Berlin" } },
  { name: "drill-down: 14:00 (an hour alone), no period, video, in Kolkata", f: { hour: 14, type: "video", tz: "Asia/Kolkata" } },
  { name: "drill-down: Mondays 09:00 of a uid, from only", f: { weekday: 1, hour: 9, uid: "o'brien", from: NOW - 120 * 86_400 } },
  { name: "a viewer of beta", f: {}, scope: "viewer" },
  { name: "a viewer of beta, beta asked", f: { apps: ["beta"], hasRecording: true }, scope: "viewer" },
];

/** The newest recordings stored twice more (a redelivery, unmerged): more than a page of the recordings list. */
const DUPLICATED_RECORDINGS = 15;

/** The calls whose v2 rows get a history of cancel rows (about one in twelve: test-parity-churn.ts). */
const CHURNED = "cityHash64(session_id) % 12 = 5";

const BOUNDED: ReportName[] = ["apps", "daily", "breakdowns", "durations", "heatmap", "engagement", "totals", "recording-summary", "clients"];

/** A paged report: two pages (and one past the end), every row of the CSV and its bytes, in the same order. */
async function expectSamePaged(mem: AnalyticsEngine, engine: AnalyticsEngine, name: PagedName, f: Filters, scope: Scope, perPage: number, where: string): Promise<void> {
  const all = await collect((await mem.csv(name, f, scope)) as AsyncIterable<readonly unknown[]>);
  for (const page of new Set([1, 2, Math.max(1, Math.ceil(all.length / perPage / 2)), Math.ceil(all.length / perPage) + 1])) {
    const fp = { ...f, page, perPage };
    expect(await engine.report(name, fp, scope), `${where} page ${page}`).toEqual(await mem.report(name, fp, scope));
  }
  // The participants CSV comes from ClickHouse as its written lines (reports/participants-csv.ts): its bytes are compared below.
  if (name !== "participants") expect(await collect((await engine.csv(name, f, scope)) as AsyncIterable<readonly unknown[]>), `${where} CSV rows`).toEqual(all);
  expect(await csvText(engine, name, f, scope), `${where} CSV bytes`).toBe(await csvText(mem, name, f, scope));
}

type PagedName = "participants" | "participants-combined" | "recordings-awaiting" | "recordings";

describe.skipIf(CLICKHOUSE_SKIP_REASON)("ClickHouse engine: the in-memory engine's answers", () => {
  let cluster: TestClickHouse;
  let clusterClient: ClickHouse;
  let clusterShards: ShardV2[] = [];
  let chdb: ClickHouse;
  let wh: Warehouse;
  let viewer: Scope;
  let mem: AnalyticsEngine;
  const targets: Array<{ name: string; engine: AnalyticsEngine }> = [];
  const churned: Churned[] = [];

  beforeAll(async () => {
    cluster = await startClickHouse({ shards: 2 });
    await migrateClickHouse(cluster.config(DB));
    clusterClient = openClickHouse(cluster.config(DB));
    chdb = openChdb(DB);
    await applyMigrations(chdb, chdb.placement);
    // The copy writes schema v2 through its writer (every shard's client); its second and
    // later copies replace states (cancel rows); then the churn leaves more cancel rows no
    // merge has collapsed (test-parity-churn.ts).
    clusterShards = await openShardsV2(clusterClient, cluster.config(DB));
    wh = await buildWarehouse([clusterClient, chdb], new Map([[clusterClient, new CallWriterV2(clusterClient, clusterShards)]]));
    const v2Local = ["calls_v2", "participants_v2", "calls_by_bucket", "calls_by_month", "participants_by_month", "concurrency_by_quarter"];
    const shards = cluster.servers.map((s) => openClickHouse(forHost(cluster.config(DB), s.host)));
    await holdMerges(shards, v2Local.map((t) => `${t}_local`));
    await Promise.all(shards.map((s) => s.close()));
    await holdMerges([chdb], v2Local);
    for (const ch of [clusterClient, chdb]) churned.push(await churnV2(ch, CHURNED));
    // Recordings delivered again (the forwarder writes the same row once more), left unmerged: the
    // newest ones, so that the duplicates fill the first page the recordings list reads without FINAL.
    // Written on each shard into its own table (a call's recordings are on its shard).
    const recordingShards = cluster.servers.map((s) => openClickHouse(forHost(cluster.config(DB), s.host)));
    for (const [ch, table] of [...recordingShards.map((s) => [s, "recordings_local"] as const), [chdb, "recordings"] as const]) {
      await holdMerges([ch], [table]);
      const recordings = `${DB}.${table}`;
      for (let i = 0; i < 2; i++) {
        await ch.command(`INSERT INTO ${recordings} SELECT * FROM ${recordings} WHERE (app_pk, session_id, start_key) IN
          (SELECT app_pk, session_id, start_key FROM ${recordings} FINAL WHERE deleted = 0 ORDER BY coalesce(start_time, intDiv(received_ms, 1000)) DESC LIMIT ${DUPLICATED_RECORDINGS})`);
      }
      const [stored] = await ch.rows<{ rows: number; recordings: number }>(`SELECT count() AS rows, (SELECT count() FROM ${recordings} FINAL) AS recordings FROM ${recordings}`);
      expect(Number(stored.rows), "recordings stored twice or more, unmerged").toBeGreaterThan(Number(stored.recordings));
    }
    await Promise.all(recordingShards.map((s) => s.close()));
    mem = createMemoryEngine({ db: () => wh.db });
    viewer = { appPks: [wh.db.$client.prepare("SELECT pk FROM apps WHERE app_id = 'beta'").pluck().get() as number] };
    // The second copy carried changed calls (new versions of calls already in ClickHouse).
    expect(wh.secondCopy.calls_v2).toBeGreaterThanOrEqual(wh.changed.length);
    expect(wh.changedSeveralTimes).toHaveLength(6);
    for (const [name, ch] of [["two-shard cluster", clusterClient], ["chdb", chdb]] as const) targets.push({ name, engine: createClickHouseEngine({ ch, db: () => wh.db }) });
  }, 600_000); // the fixture syncs, copies five times into two targets: minutes on a busy box

  afterAll(async () => {
    await wh?.stop();
    await Promise.all(clusterShards.filter((s) => s.client !== clusterClient).map((s) => s.client.close()));
    await clusterClient?.close();
    await chdb?.close();
    await cluster?.stop();
  }, 300_000); // two shards stopping and chdb cleaning up (synchronous) on a loaded box


  for (const c of CASES) {
    it(`answers "${c.name}" the same`, { timeout: 600_000 }, async () => {
      const scope = c.scope === "viewer" ? viewer : ADMIN;
      const base = filters(c.f);
      const calls = (await mem.report("totals", base, scope)).current.calls;
      if (c.empty) expect(calls).toBe(0);
      else expect(calls, "the case matches calls").toBeGreaterThan(0);
      for (const { name: target, engine } of targets) {
        const at = (what: string) => `${target} / ${c.name} / ${what}`;
        for (const name of BOUNDED) {
          expect(await engine.report(name, base, scope), at(name)).toEqual(await mem.report(name, base, scope));
          expect(await csvText(engine, name, base, scope), at(`${name} CSV bytes`)).toBe(await csvText(mem, name, base, scope));
        }
        // The calls list: pages, every sort (some cases), and its CSV in full.
        const sorts: Array<Pick<Filters, "sort" | "order">> = c.allSorts
          ? (["start", "duration", "participants", "minutes"] as const).flatMap((sort) => (["asc", "desc"] as const).map((order) => ({ sort, order })))
          : [{ sort: "start", order: "desc" }];
        for (const s of sorts) {
          const f = { ...base, ...s };
          const all = await allCalls(mem, f, scope);
          const lastPage = Math.max(1, Math.ceil(all.length / 40));
          // The first pages and the last (runs of equal keys cross their edges: test-parity-fixture.ts TIE_START, 0-minute calls).
          // And a page in the middle: a deep page whose prefix of the order is a bound on the sort key, with its ties.
          for (const page of new Set([1, 2, 3, Math.ceil(lastPage / 2), Math.max(1, lastPage - 1), lastPage, lastPage + 1])) {
            const fp = { ...f, page, perPage: 40 };
            expect(await engine.report("calls", fp, scope), at(`calls ${s.sort} ${s.order} page ${page}`)).toEqual(await mem.report("calls", fp, scope));
          }
          expect(await allCalls(engine, f, scope), at(`calls ${s.sort} ${s.order} (all)`)).toEqual(all);
          // The ClickHouse engine writes the calls CSV's lines itself (reports/calls-csv.ts): its bytes, every row in order, are the in-memory engine's.
          expect(await csvText(engine, "calls", f, scope), at(`calls ${s.sort} ${s.order} CSV bytes`)).toBe(await csvText(mem, "calls", f, scope));
        }
        // Participants, and across apps: by calls and by minutes, both orders, two pages; the CSV.
        for (const sort of ["start", "minutes"] as const) {
          for (const order of ["desc", "asc"] as const) {
            await expectSamePaged(mem, engine, "participants", { ...base, sort, order }, scope, 25, at(`participants ${sort} ${order}`));
            await expectSamePaged(mem, engine, "participants-combined", { ...base, sort, order }, scope, 20, at(`participants-combined ${sort} ${order}`));
          }
        }
        await expectSamePaged(mem, engine, "recordings-awaiting", base, scope, 20, at("recordings-awaiting"));
        await expectSamePaged(mem, engine, "recordings", base, scope, 10, at("recordings"));
      }
    });
  }

  it("drill-down: a heatmap cell's count is the number of calls its weekday/hour filter lists, on every engine (a quarter of the cells; no fall-back hour in the periods)", { timeout: 600_000 }, async () => {
    const periods = [
      filters({ from: d("2026-02-28T18:15:00Z"), to: d("2026-03-31T18:15:00Z"), tz: "Asia/Kathmandu" }),
      filters({ from: d("2026-03-05T05:00:00Z"), to: d("2026-03-12T04:00:00Z"), tz: "America/New_York", type: "video" }),
    ];
    for (const { name: target, engine } of [{ name: "in-memory", engine: mem }, ...targets]) {
      for (const f of periods) {
        const cells = (await engine.report("heatmap", f, ADMIN)).data;
        expect(cells.filter((c) => c.calls > 0).length, `${target} ${f.tz}: cells with calls`).toBeGreaterThan(20);
        // Hours 0, 4, 8, 12, 16 and 20 of every weekday: all 168 cells take minutes per engine on a loaded box.
        for (const cell of cells.filter((c) => (c.weekday * 24 + c.hour) % 4 === 0)) {
          const listed = await engine.report("calls", { ...f, weekday: cell.weekday, hour: cell.hour, perPage: 1 }, ADMIN);
          expect(listed.meta.pagination.total, `${target} ${f.tz} ${cell.weekdayName} ${cell.hour}:00`).toBe(cell.calls);
        }
      }
    }
  });

  it("has something to compare in the dashboard's reports: joins with every kind of client, links awaited, uids in several apps", async () => {
    expect(wh.deliveries.first).toBeGreaterThan(500);
    expect(wh.deliveries.later).toBeGreaterThan(100);
    const all = filters({});
    const clients = (await mem.report("clients", all, ADMIN)).data;
    for (const dim of ["platform", "sdk", "media", "videoMuted"]) expect(clients.filter((r) => r.dimension === dim && r.value !== "unknown").length, dim).toBeGreaterThan(1);
    expect(clients.some((r) => r.value === "unknown")).toBe(true);
    const summary = (await mem.report("recording-summary", all, ADMIN)).data;
    for (const k of ["flagged", "withLink", "awaiting", "linkNotFlagged", "links", "linksForUnsyncedCalls"] as const) expect(summary[k], k).toBeGreaterThan(0);
    const combined = await collect((await mem.csv("participants-combined", all, ADMIN)) as AsyncIterable<ReadonlyArray<{ apps: readonly string[] }>>);
    expect(combined.some((r) => r.apps.length > 1), "a uid used in several apps").toBe(true);
  });

  it("reads schema v2 with cancel rows not yet merged: states moved a month and back, cancel rows landed before their state, deleted calls", { timeout: 180_000 }, async () => {
    const pks = wh.db.$client.prepare("SELECT pk FROM apps").pluck().all() as number[];
    const calls = (await mem.report("totals", filters({}), ADMIN)).current.calls;
    for (const [i, ch] of [clusterClient, chdb].entries()) {
      const [rows] = await ch.rows<{ cancels: number; live: number; moved: number }>(
        `SELECT countIf(sign = -1) AS cancels, sumIf(sign, app_pk IN (${pks.join(", ")})) AS live,
          uniqExactIf(session_id, sign = -1 AND toYYYYMM(start_at) != toYYYYMM(toDateTime(ifNull(started_at, initiated_at)))) AS moved
        FROM ${DB}.calls_v2`,
      );
      expect(rows.cancels, "cancel rows").toBeGreaterThan(2 * churned[i].changed.length);
      expect(rows.moved, "cancelled states in another month").toBeGreaterThan(20);
      expect(rows.live, "live calls of the apps").toBe(calls);
    }
    const appOf = (pk: number) => wh.db.$client.prepare("SELECT app_id FROM apps WHERE pk = ?").pluck().get(pk) as string;
    for (const [i, { engine }] of targets.entries()) {
      for (const c of churned[i].changed.filter((c) => appOf(c.appPk)).slice(0, 40)) {
        const ref = { app: appOf(c.appPk), sessionId: c.sessionId };
        expect(await engine.call(ref, ADMIN), `${ref.app}/${ref.sessionId}`).toEqual(await mem.call(ref, ADMIN));
      }
      for (const c of churned[i].deleted.filter((c) => appOf(c.appPk))) await expect(engine.call({ app: appOf(c.appPk), sessionId: c.sessionId }, ADMIN)).rejects.toMatchObject({ status: 404 });
    }
  });

  it("has runs of equal keys across page edges, in an order only arrival gives, listed the same by every engine", async () => {
    const f = filters({ sort: "start", order: "desc" });
    const ties = (await allCalls(mem, f, ADMIN)).filter((r) => r.startAt === TIE_START);
    expect(ties.length).toBe(100);
    expect(new Set(ties.map((r) => r.app))).toEqual(new Set(["alpha", "beta"]));
    // Newest arrival first: the late round, then the first; neither app nor session id gives that order.
    const keys = ties.map((r) => `${r.app}\u0000${r.sessionId}`);
    expect(keys).not.toEqual([...keys].sort().reverse());
    expect(ties[0].sessionId).toBe("tie-late-001");
    expect(ties.at(-1)!.sessionId).toBe("tie-070");
    // Pages of 40 from the top: the run covers pages 1 to 3.
    for (const { name: target, engine } of targets) {
      for (const page of [1, 2, 3]) {
        const fp = { ...f, page, perPage: 40 };
        const answer = await engine.report("calls", fp, ADMIN);
        expect(answer.data.some((r) => r.startAt === TIE_START), `${target} page ${page}`).toBe(true);
        expect(answer, `${target} page ${page}`).toEqual(await mem.report("calls", fp, ADMIN));
      }
    }
  });

  it("answers one call the same: changed calls, calls that lost participants, calls changed several times or moved across a month, deleted calls (404) and a sample", { timeout: 300_000 }, async () => {
    const sample = wh.db.$client.prepare("SELECT a.app_id AS app, c.session_id AS sessionId FROM calls c JOIN apps a ON a.pk = c.app_pk WHERE c.pk % 50 = 0").all() as Array<{ app: string; sessionId: string }>;
    let withEvents = 0;
    for (const { name: target, engine } of targets) {
      for (const ref of [...wh.changed, ...wh.changedSeveralTimes, ...sample]) {
        const want = await mem.call(ref, ADMIN);
        if (want.events.length > 0) withEvents++;
        expect(await engine.call(ref, ADMIN), `${target} ${ref.app}/${ref.sessionId}`).toEqual(want);
      }
      for (const ref of wh.deleted) await expect(engine.call(ref, ADMIN), `${target} deleted ${ref.sessionId}`).rejects.toMatchObject({ status: 404 });
      await expect(engine.call({ app: "alpha", sessionId: wh.changed[0].sessionId }, viewer)).rejects.toMatchObject({ status: 404 });
    }
    expect(withEvents, "calls compared with an event log").toBeGreaterThan(5);
  });

  it("gives alerts the same value of every metric, over days and hours, with and without filters", { timeout: 300_000 }, async () => {
    const windows = [0, 3, 17, 60].flatMap((daysAgo) => {
      const from = NOW - (daysAgo + 1) * 86_400;
      return [{ from, to: from + 86_400 }, { from: from + 14 * 3600, to: from + 15 * 3600 }];
    });
    let busy = 0;
    for (const f of [{}, { app: ["alpha"], type: "video" as const }, { mode: "meet" as const, status: "ended" as const }]) {
      for (const range of windows) {
        for (const metric of METRIC_NAMES) {
          const want = await measure(wh.db, mem, metric, f, range, true);
          if (want.calls > 0) busy++;
          for (const { name: target, engine } of targets) expect(await measure(wh.db, engine, metric, f, range, true), `${target} ${metric} ${JSON.stringify(f)} ${range.from}`).toEqual(want);
        }
      }
    }
    expect(busy, "windows with calls").toBeGreaterThan(20);
  });

  it("refuses an app the caller may not see, and a removed app, as the in-memory engine does (404)", async () => {
    for (const { engine } of targets) {
      for (const [f, scope] of [[filters({ apps: ["alpha"] }), viewer], [filters({ apps: [wh.removedApp] }), ADMIN]] as const) {
        await expect(mem.report("totals", f, scope)).rejects.toMatchObject({ status: 404 });
        for (const name of ["calls", "totals", "participants", "daily"] as const) await expect(engine.report(name, f, scope)).rejects.toMatchObject({ status: 404 });
        await expect(engine.csv("calls", f, scope)).rejects.toMatchObject({ status: 404 });
      }
    }
  });
});
