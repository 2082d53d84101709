import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import { filters, type AnalyticsEngine, type Filters, type Scope } from "@/lib/analytics";
import { createMemoryEngine } from "@/lib/analytics/engines/memory";
import { openFixtureDb, randomCall, rng, writeCalls } from "@/lib/analytics/test-fixtures";
import { applyMigrations, type ClickHouse } from "@/lib/clickhouse";
import { copyToClickHouse } from "@/lib/clickhouse/copy";
import { openChdb } from "@/lib/clickhouse/test-chdb";
import { DURATION_BUCKETS } from "@/lib/analytics/dims";
import { createClickHouseEngine } from "./engine";
import { DURATION_BUCKET_SQL } from "./reports/insights";

process.env.AUTH_SECRET ??= "pre-aggregate-reads-secret-at-least-32-chars!!";

/**
 * The daily series from the 15-minute pre-aggregate and the recording summary from the
 * stored link flag (decision 0034, "The daily series from the 15-minute pre-aggregate;
 * the recording summary from the link flag (session 17)"): which statements they send,
 * and the same answers as the in-memory engine on the same calls for ranges whose edges
 * fall inside a bucket, in +05:45 and over a DST change. The parity suite
 * (parity.integration.test.ts) compares them on two 18.16 shards too.
 */

const BASE = 1_760_000_000; // 2025-10-09: the 30 days hold Berlin's DST end (2025-10-26)
const SCOPE: Scope = { appPks: "all" };

const CALLS = (() => {
  const r = rng(17);
  return Array.from({ length: 400 }, (_, i) => randomCall(r, i, BASE, 30 * 86_400));
})();
const startOf = (i: number) => CALLS[i].startedAt ?? CALLS[i].initiatedAt;

describe("ClickHouse engine: daily series and recording summary from the pre-aggregates (chdb)", () => {
  let db: Db;
  let chdb: ClickHouse;
  const sent: string[] = [];
  let clickhouse: AnalyticsEngine;
  let memory: AnalyticsEngine;

  beforeAll(async () => {
    db = openFixtureDb("ch-pre-aggregate-reads");
    writeCalls(db, CALLS);
    // Links from webhooks (which set the call's has_recording, as the ingest does): one for some calls, two for others, and some for calls never synced.
    const rec = db.$client.prepare("INSERT INTO recordings (app_pk, session_id, recording_url, recording_date, duration, start_time, received_ms) VALUES (?, ?, ?, NULL, NULL, ?, ?)");
    const linked = db.$client.prepare("UPDATE calls SET has_recording = 1 WHERE app_pk = ? AND session_id = ?");
    CALLS.forEach((c, i) => {
      if (i % 5 !== 0) return;
      const start = startOf(i);
      linked.run(c.appPk, c.sessionId);
      rec.run(c.appPk, c.sessionId, `https://rec.example/${i}/a`, start + 5, (start + 60) * 1000);
      if (i % 3 === 0) rec.run(c.appPk, c.sessionId, `https://rec.example/${i}/b`, start + 600, (start + 700) * 1000);
    });
    for (let i = 0; i < 4; i++) rec.run(1 + (i % 3), `never-synced-${i}`, `https://rec.example/orphan-${i}`, BASE + 86_400 * (3 + 5 * i), BASE * 1000);
    chdb = openChdb("pre_aggregate_reads");
    await applyMigrations(chdb, chdb.placement);
    await copyToClickHouse(db, chdb);
    const recording: ClickHouse = {
      ...chdb,
      rows: (q, signal) => (sent.push(q), chdb.rows(q, signal)),
      stream: (q, signal) => (sent.push(q), chdb.stream(q, signal)),
    };
    clickhouse = createClickHouseEngine({ db: () => db, ch: recording });
    memory = createMemoryEngine({ db: () => db });
  });
  afterAll(async () => {
    await chdb?.close();
    db?.$client.close();
  });

  const sentFor = async (name: "daily" | "recording-summary", f: Filters) => {
    sent.length = 0;
    const answer = await clickhouse.report(name, f, SCOPE);
    return { answer, queries: [...sent] };
  };

  const EDGE_CASES: Array<[string, Partial<Filters>]> = [
    ["a range starting and ending mid-bucket, Kathmandu (+05:45)", { from: BASE + 3 * 86_400 + 417, to: BASE + 20 * 86_400 + 1234, tz: "Asia/Kathmandu" }],
    ["Berlin's DST end day, from mid-bucket", { from: Date.parse("2025-10-25T22:07:00Z") / 1000, to: Date.parse("2025-10-26T23:00:00Z") / 1000, tz: "Europe/Berlin" }],
    ["less than a bucket around a call's start", { from: startOf(7) - 100, to: startOf(7) + 500 }],
    ["all time, video, Kolkata (+05:30)", { type: "video", tz: "Asia/Kolkata" }],
    ["all time, meet, Berlin (its DST end inside the calls)", { mode: "meet", tz: "Europe/Berlin" }],
    ["from only, mid-bucket, ended calls with a recording", { from: BASE + 10 * 86_400 + 61, status: "ended", hasRecording: true }],
    ["to only, mid-bucket, New York", { to: BASE + 12 * 86_400 + 899, tz: "America/New_York" }],
    // Session 18: totals from three layers. A whole October (calls_by_month), whole buckets around it, mid-quarter edges.
    ["a whole month with mid-quarter, mid-month edges, Kathmandu", { from: Date.parse("2025-09-30T10:07:13Z") / 1000, to: Date.parse("2025-11-03T05:33:20Z") / 1000, tz: "Asia/Kathmandu" }],
    ["the last 30 days to a mid-quarter instant, meet", { from: BASE + 35 * 86_400 + 611 - 30 * 86_400, to: BASE + 35 * 86_400 + 611, mode: "meet" }],
  ];

  it.each(EDGE_CASES)("gives the in-memory engine's daily series, recording summary, totals, breakdowns, apps and durations: %s", async (_, partial) => {
    const f = filters(partial);
    for (const name of ["daily", "recording-summary", "totals", "breakdowns", "apps", "durations"] as const) {
      expect(await clickhouse.report(name, f, SCOPE), name).toEqual(await memory.report(name, f, SCOPE));
    }
    // Something was counted.
    expect(JSON.stringify(await clickhouse.report("daily", f, SCOPE))).toMatch(/"calls":[1-9]/);
  });

  it("reads the daily series from calls_by_bucket, and the signed rows only at the range's edges", async () => {
    const { queries } = await sentFor("daily", filters({ from: BASE + 3 * 86_400 + 417, to: BASE + 20 * 86_400 + 1234, tz: "Asia/Kathmandu", mode: "meet" }));
    const series = queries.filter((q) => /GROUP BY day/.test(q));
    expect(series).toHaveLength(1);
    expect(series[0]).toMatch(/calls_by_bucket/);
    // The signed rows: only those outside the whole buckets.
    expect(series[0]).toMatch(/FROM\s+\S*calls_v2\S*\s+WHERE[\s\S]*\(start_at < toStartOfFifteenMinutes[\s\S]* OR start_at >= toStartOfFifteenMinutes/);
    const allTime = await sentFor("daily", filters({ tz: "Asia/Kathmandu" }));
    for (const q of allTime.queries) expect(q, "all time: the pre-aggregate alone").not.toMatch(/calls_v2/);
    // The zone's offsets are bounded by the monthly pre-aggregate's months: the 15-minute one is read once, for the series.
    expect(allTime.queries.filter((q) => /calls_by_bucket/.test(q))).toHaveLength(1);
    expect(allTime.queries.filter((q) => /calls_by_month/.test(q))).toHaveLength(1);
  });

  it("reads totals' whole months from calls_by_month, whole buckets from calls_by_bucket, and the signed rows only under a quarter at each edge", async () => {
    const f = filters({ from: Date.parse("2025-09-30T10:07:13Z") / 1000, to: Date.parse("2025-11-03T05:33:20Z") / 1000, tz: "Asia/Kathmandu" });
    sent.length = 0;
    await clickhouse.report("totals", f, SCOPE);
    const cube = sent.filter((q) => /GROUP BY callType/.test(q));
    expect(cube).toHaveLength(1);
    expect(cube[0]).toMatch(/calls_by_month/);
    expect(cube[0]).toMatch(/calls_by_bucket/);
    // Every read of the signed rows is bounded to outside the whole buckets.
    const rowReads = cube[0].split(/UNION ALL/).filter((part) => /calls_v2/.test(part));
    expect(rowReads.length).toBeGreaterThan(0);
    for (const part of rowReads) expect(part).toMatch(/\(start_at < toStartOfFifteenMinutes[\s\S]* OR start_at >= toStartOfFifteenMinutes/);
    // A 30-day window (no whole month): buckets and edges, no months.
    sent.length = 0;
    await clickhouse.report("totals", filters({ from: BASE + 611, to: BASE + 30 * 86_400 + 611 }), SCOPE);
    const window = sent.filter((q) => /GROUP BY callType/.test(q))[0];
    expect(window).toMatch(/calls_by_bucket/);
    expect(window).not.toMatch(/calls_by_month/);
    // All time: the monthly pre-aggregate alone.
    sent.length = 0;
    await clickhouse.report("totals", filters({}), SCOPE);
    for (const q of sent) expect(q).not.toMatch(/calls_v2|calls_by_bucket/);
  });

  it("puts a duration on each bucket bound into the bucket it opens (the durations' bin as a sum of comparisons)", async () => {
    const seconds = [-1, 0, 59, 60, 299, 300, 899, 900, 1799, 1800, 3599, 3600, 86_400];
    const rows = await chdb.rows<{ d: number; bin: number }>(
      `SELECT toInt64(d) AS d, toUInt8(${DURATION_BUCKET_SQL.replaceAll("duration_seconds", "d")}) AS bin FROM (SELECT arrayJoin([${seconds.join(", ")}]) AS d) ORDER BY d`,
    );
    // DURATION_BUCKETS: the first bucket whose bound the duration is under.
    expect(rows.map((r) => [Number(r.d), Number(r.bin)])).toEqual(seconds.map((d) => [d, DURATION_BUCKETS.findIndex((b) => d < b.maxSeconds)]));
  });

  it("reads the daily series from the signed rows when a filter is not a dimension of the pre-aggregate", async () => {
    // A uid, the weekday/hour filter, and a `from` whose next bucket a DateTime cannot hold.
    for (const f of [filters({ uid: "alice" }), filters({ weekday: 1, hour: 9 }), filters({ from: 4_294_967_000, to: 4_294_967_295 })]) {
      const { queries, answer } = await sentFor("daily", f);
      const series = queries.filter((q) => /GROUP BY day/.test(q));
      expect(series[0], JSON.stringify(f)).not.toMatch(/calls_by_bucket/);
      expect(answer).toEqual(await memory.report("daily", f, SCOPE));
      expect(await clickhouse.report("totals", f, SCOPE), JSON.stringify(f)).toEqual(await memory.report("totals", f, SCOPE));
    }
  });

  it("counts a summary's links against the linked calls only, by one integer key", async () => {
    const { queries } = await sentFor("recording-summary", filters({}));
    const summary = (await clickhouse.report("recording-summary", filters({}), SCOPE)).data;
    const onRecordings = queries.filter((q) => /recordings/.test(q));
    expect(onRecordings).toHaveLength(2);
    for (const q of onRecordings) {
      expect(q).toMatch(/has_link = 1/);
      expect(q, "no (app, session id) tuples").not.toMatch(/\(app_pk, session_id\)\s+(NOT )?IN/);
    }
    // The fixture has links, links of calls never synced, and calls with two links.
    expect(summary.links).toBeGreaterThan(summary.withLink);
    expect(summary.linksForUnsyncedCalls).toBe(4);
  });
});
