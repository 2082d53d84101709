import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import { filters, MAX_CROSSINGS, type AnalyticsEngine, type Filters, type Scope } from "@/lib/analytics";
import { createMemoryEngine } from "@/lib/analytics/engines/memory";
import { openFixtureDb, randomCall, rng, writeCalls, type FixtureCall } from "@/lib/analytics/test-fixtures";
import { applyMigrations, type ClickHouse } from "@/lib/clickhouse";
import { copyToClickHouse } from "@/lib/clickhouse/copy";
import { qualified, quoteIdentifier } from "@/lib/clickhouse/schema";
import { CALLS_V2, HEATMAP_MAX_CROSSINGS } from "@/lib/clickhouse/schema-v2";
import { openChdb } from "@/lib/clickhouse/test-chdb";
import { churnV2, holdMerges } from "./test-parity-churn";
import { createClickHouseEngine } from "./engine";
import { getConcurrencyHeatmap } from "./reports/heatmap";

process.env.AUTH_SECRET ??= "heatmap-reads-secret-at-least-32-chars!!!!";

/**
 * The concurrency heatmap from concurrency_by_quarter (decision 0034, "The heatmap from a
 * pre-aggregate (session 18)"): which statements it sends, and the in-memory engine's
 * answers on the same calls, with cancel rows no merge collapsed (re-synced calls whose
 * end and start changed, deleted calls), calls across midnight, a month's end and DST
 * changes, ongoing calls, in +05:45 / +05:30 / DST zones, windows open on either side.
 * The parity suite (parity.integration.test.ts) compares it on two 18.16 shards too.
 */

const BASE = 1_760_000_000; // 2025-10-09: the 30 days hold Berlin's DST end (2025-10-26) and October's end
const d = (iso: string) => Date.parse(iso) / 1000;
const SCOPE: Scope = { appPks: "all" };

const CALLS: FixtureCall[] = (() => {
  const r = rng(25);
  const calls = Array.from({ length: 500 }, (_, i) => randomCall(r, i, BASE, 30 * 86_400));
  // Calls across Berlin's fall-back night, across midnight UTC into November, and a long one across both.
  const across = (i: number, start: number, seconds: number) => {
    const c = calls[i];
    Object.assign(c, { status: "ended", startedAt: start, initiatedAt: start - 5, endedAt: start + seconds, durationSeconds: seconds });
  };
  across(0, d("2025-10-26T00:20:00Z"), 3 * 3600 + 7);
  across(1, d("2025-10-31T23:50:00Z"), 40 * 60);
  across(2, d("2025-10-25T21:59:59Z"), 8 * 86_400);
  across(3, d("2025-10-26T00:44:00Z"), 17 * 60);
  return calls;
})();

describe("ClickHouse engine: the heatmap from concurrency_by_quarter (chdb)", () => {
  let db: Db;
  let chdb: ClickHouse;
  const sent: string[] = [];
  let clickhouse: AnalyticsEngine;
  let memory: AnalyticsEngine;

  beforeAll(async () => {
    db = openFixtureDb("ch-heatmap-reads");
    writeCalls(db, CALLS);
    chdb = openChdb("heatmap_reads");
    await applyMigrations(chdb, chdb.placement);
    await copyToClickHouse(db, chdb);
    // No merge collapses what the churn writes before it reads it back (test-parity-churn.ts).
    await holdMerges([chdb], ["calls_v2", "participants_v2", "concurrency_by_quarter"]);
    // Re-synced calls with a passing state whose end is hours later, and its cancel row landing first (a late insert)…
    const table = qualified(chdb.placement.database, CALLS_V2.name);
    const names = CALLS_V2.columns.map(([n]) => quoteIdentifier(n));
    const passing = (sign: number) =>
      `INSERT INTO ${table} (${names.join(", ")}) SELECT ${CALLS_V2.columns.map(([n]) =>
        n === "sign" ? `toInt8(${sign}) AS x_sign` : n === "version" ? "version + 10 AS x_version" : n === "ended_at" ? "ended_at + 20000 AS x_ended_at" : quoteIdentifier(n)).join(", ")}
       FROM ${table} WHERE sign = 1 AND ended_at IS NOT NULL AND cityHash64(session_id) % 7 = 3`;
    await chdb.command(passing(-1));
    await chdb.command(passing(1));
    // … and the parity suite's churn: states moved a month on and back, a deleted call.
    await churnV2(chdb, "cityHash64(session_id) % 9 = 2");
    const recording: ClickHouse = { ...chdb, rows: (q, signal) => (sent.push(q), chdb.rows(q, signal)), stream: (q, signal) => (sent.push(q), chdb.stream(q, signal)) };
    clickhouse = createClickHouseEngine({ db: () => db, ch: recording });
    memory = createMemoryEngine({ db: () => db });
  });
  afterAll(async () => {
    await chdb?.close();
    db?.$client.close();
  });

  const heatmap = async (f: Filters) => {
    sent.length = 0;
    const answer = await clickhouse.report("heatmap", f, SCOPE);
    return { answer, queries: [...sent] };
  };

  const CASES: Array<[string, Partial<Filters>]> = [
    ["all time, Berlin", { tz: "Europe/Berlin" }],
    ["Berlin's DST end day", { from: d("2025-10-25T22:00:00Z"), to: d("2025-10-26T23:00:00Z"), tz: "Europe/Berlin" }],
    ["the 30 days, Kathmandu (+05:45), edges mid-hour", { from: BASE + 417, to: BASE + 29 * 86_400 + 1234, tz: "Asia/Kathmandu" }],
    ["around October's end, Kolkata (+05:30)", { from: d("2025-10-30T00:00:00Z"), to: d("2025-11-03T00:00:00Z"), tz: "Asia/Kolkata" }],
    ["from only, audio ended", { from: BASE + 10 * 86_400 + 61, type: "audio", status: "ended" }],
    ["to only, New York, video with a recording", { to: BASE + 12 * 86_400 + 899, tz: "America/New_York", type: "video", hasRecording: true }],
    ["Lord Howe (30-minute DST), group calls of 2", { tz: "Australia/Lord_Howe", receiverType: "group", participantsCount: 2 }],
    ["one app, meet", { apps: ["app-two"], mode: "meet" }],
    ["a window with no call", { from: BASE - 40 * 86_400, to: BASE - 35 * 86_400, tz: "Asia/Kathmandu" }],
  ];

  it("reads the pre-aggregate alone, never the signed rows, when its dimensions answer the filters", async () => {
    expect(HEATMAP_MAX_CROSSINGS).toBe(MAX_CROSSINGS);
    for (const [name, f] of CASES.filter(([, f]) => f.participantsCount === undefined && f.hasRecording === undefined)) {
      const { queries } = await heatmap(filters(f));
      expect(queries.filter((q) => /concurrency_by_quarter/.test(q)), name).toHaveLength(1);
      expect(queries.filter((q) => /calls_v2/.test(q)), name).toEqual([]);
    }
  });

  it("reads the signed rows for a uid, the weekday/hour drill-down, the participant count and hasRecording", async () => {
    for (const f of [{ uid: "alice" }, { weekday: 0, tz: "Europe/Berlin" }, { hour: 3, from: BASE, to: BASE + 86_400 * 20 }, { participantsCount: 2 }, { hasRecording: false }]) {
      const { queries } = await heatmap(filters(f));
      expect(queries.some((q) => /calls_v2/.test(q))).toBe(true);
      expect(queries.some((q) => /concurrency_by_quarter/.test(q))).toBe(false);
    }
  });

  for (const [name, f] of [...CASES, ["a uid, Kathmandu", { uid: "alice", tz: "Asia/Kathmandu" }] as [string, Partial<Filters>]]) {
    it(`answers "${name}" as the in-memory engine`, async () => {
      const fs = filters(f);
      const expected = await memory.report("heatmap", fs, SCOPE);
      if (!name.startsWith("a window with no call")) expect(expected.data.some((c) => c.calls > 0), "the case counts calls").toBe(true);
      expect((await heatmap(fs)).answer).toEqual(expected);
      // The signed rows alone (what the pre-aggregate replaced) give the same cells.
      expect({ data: await getConcurrencyHeatmap({ db: () => db, ch: chdb }, fs, SCOPE, undefined, "rows") }).toEqual(expected);
    });
  }
});
