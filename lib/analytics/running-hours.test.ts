import { beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import { HttpError } from "@/lib/http/errors";
import { offsetAt } from "@/lib/time/tz";
import { createMemoryEngine } from "./engines/memory";
import { filters, parseFilters, type Filters } from "./filters";
import { MAX_CROSSINGS, type HeatmapCell, type TotalsReport } from "./report-types";
import { runningHoursOf, runningHoursSql, SQLITE_DIALECT } from "./running-hours";
import { openFixtureDb, randomCall, rng, startOf, writeCalls, type FixtureCall } from "./test-fixtures";

/**
 * The weekday/hour filters (the heatmap's drill-down): a heatmap cell's count is the
 * number of calls the drill-down lists, on a real SQLite file through the in-memory
 * engine's interface (the ClickHouse engine: parity.integration.test.ts), in UTC, over
 * New York's spring-forward week, Berlin's fall-back day and in Kathmandu (+05:45); the
 * SQL form of the test (SQLite here) keeps the same calls as the store's kernels, and
 * both agree with an oracle walking each call quarter hour by quarter hour with Intl.
 */

const d = (iso: string) => Date.parse(iso) / 1000;
const ALL = { appPks: "all" as const };

const CASES: Array<{ name: string; f: Partial<Filters> }> = [
  { name: "UTC, a week", f: { from: d("2026-03-02T00:00:00Z"), to: d("2026-03-09T00:00:00Z") } },
  { name: "New York's DST start week", f: { from: d("2026-03-05T05:00:00Z"), to: d("2026-03-12T04:00:00Z"), tz: "America/New_York" } },
  { name: "Berlin's DST end day", f: { from: d("2025-10-25T22:00:00Z"), to: d("2025-10-26T23:00:00Z"), tz: "Europe/Berlin" } },
  { name: "Kathmandu (+05:45), from mid-hour", f: { from: d("2026-03-03T10:20:00Z"), to: d("2026-03-10T18:15:00Z"), tz: "Asia/Kathmandu" } },
  { name: "Kathmandu, no period", f: { tz: "Asia/Kathmandu" } },
];

let db: Db;
let calls: FixtureCall[];
const engine = createMemoryEngine({ db: () => db });

beforeAll(() => {
  db = openFixtureDb("running-hours");
  const r = rng(29);
  calls = [
    ...Array.from({ length: 1500 }, (_, i) => randomCall(r, i, d("2026-03-01T00:00:00Z"), 12 * 86_400)),
    ...Array.from({ length: 500 }, (_, i) => randomCall(r, 10_000 + i, d("2025-10-25T12:00:00Z"), 2 * 86_400)),
  ];
  writeCalls(db, calls);
});

/** The oracle: the (weekday × 24 + hour) cells a call counts in, each local hour once — quarter hour by quarter hour, offsets from Intl. */
function cellsOf(c: FixtureCall, f: Filters): Map<string, number> {
  const start = startOf(c);
  const span = c.endedAt === null ? 0 : Math.max(0, c.endedAt - start);
  const q0 = Math.floor(start / 900);
  const last = Math.max(q0, Math.min(Math.floor((start + span - 1) / 900), q0 + MAX_CROSSINGS));
  const h = runningHoursOf({ ...f, weekday: 0 })!;
  const hours = new Map<string, number>();
  for (let q = q0; q <= last; q++) {
    const t = q * 900;
    if (t < h.lo || t >= h.hi) continue;
    const local = t + offsetAt(f.tz, t);
    const date = new Date(local * 1000);
    // One local hour instance: its wall hour and the offset it is on (a repeated hour is two).
    const key = `${Math.floor(local / 3600)}|${offsetAt(f.tz, t)}`;
    hours.set(key, date.getUTCDay() * 24 + date.getUTCHours());
  }
  const cells = new Map<string, number>();
  for (const cell of hours.values()) cells.set(String(cell), (cells.get(String(cell)) ?? 0) + 1);
  return cells;
}

async function listed(f: Filters): Promise<number> {
  return (await engine.report("calls", { ...f, perPage: 1 }, ALL)).meta.pagination.total;
}

describe("weekday and hour filters", () => {
  it("parse as whole numbers in range, and refuse anything else with a 400 naming the parameter", () => {
    expect(parseFilters(new URLSearchParams("weekday=0&hour=23"))).toMatchObject({ weekday: 0, hour: 23 });
    expect(parseFilters(new URLSearchParams("weekday=6"))).toMatchObject({ weekday: 6, hour: undefined });
    for (const [q, parameter] of [["weekday=7", "weekday"], ["weekday=-1", "weekday"], ["hour=24", "hour"], ["hour=1.5", "hour"], ["hour=x", "hour"], ["hour=1&hour=2", "hour"]]) {
      let err: unknown;
      try {
        parseFilters(new URLSearchParams(q));
      } catch (e) {
        err = e;
      }
      expect(err, q).toBeInstanceOf(HttpError);
      expect((err as HttpError).status).toBe(400);
      expect((err as HttpError).message).toContain(parameter);
    }
  });

  for (const { name, f: partial } of CASES) {
    it(`a heatmap cell's count is the number of calls its drill-down lists: ${name}`, async () => {
      const f = filters(partial);
      const cells = (await engine.report("heatmap", f, ALL)).data as HeatmapCell[];
      const oracle = calls.map((c) => cellsOf(c, f));
      let nonEmpty = 0;
      for (const cell of cells) {
        const key = String(cell.weekday * 24 + cell.hour);
        const kept = oracle.filter((m) => m.has(key)).length;
        const count = oracle.reduce((s, m) => s + (m.get(key) ?? 0), 0);
        // The heatmap counts a call once per hour it meets (the oracle, independently).
        expect(cell.calls, `${name} cell ${key}`).toBe(count);
        const got = await listed({ ...f, weekday: cell.weekday, hour: cell.hour });
        // The list names each call once: equal, but for a call meeting the cell twice (a fall-back's repeated hour).
        expect(got, `${name} drill-down ${cell.weekdayName} ${cell.hour}:00`).toBe(kept);
        if (count > 0) nonEmpty++;
      }
      const twice = oracle.filter((m) => [...m.values()].some((n) => n > 1)).length;
      if (name.includes("Berlin")) expect(twice, "calls across both of the fall-back's 02:00 hours").toBeGreaterThan(0);
      else for (const cell of cells) expect(await listed({ ...f, weekday: cell.weekday, hour: cell.hour }), `${name} ${cell.weekday}/${cell.hour}`).toBe(cell.calls);
      expect(nonEmpty).toBeGreaterThan(20);
    });
  }

  it("a weekday alone, or an hour alone, keeps the calls running in any hour of it (against the oracle), and the calls list, totals and SQL agree", async () => {
    const base = filters(CASES[1].f);
    for (const extra of [{ weekday: 0 }, { weekday: 3 }, { hour: 2 }, { hour: 14 }, { weekday: 0, hour: 2 }]) {
      const f = { ...base, ...extra };
      const want = calls.filter((c) => [...cellsOf(c, base).keys()].some((k) => (f.weekday === undefined || Math.floor(Number(k) / 24) === f.weekday) && (f.hour === undefined || Number(k) % 24 === f.hour)));
      expect(await listed(f), `list ${JSON.stringify(extra)}`).toBe(want.length);
      const totals = (await engine.report("totals", f, ALL)) as unknown as TotalsReport;

      expect(totals.current.calls, `totals ${JSON.stringify(extra)}`).toBe(want.length);
      // The SQL form (what recordings and client sessions filter by in SQLite, and ClickHouse runs in its dialect).
      const where = runningHoursSql(runningHoursOf(f)!, "c.start_at", "c.ended_at", SQLITE_DIALECT);
      const bySql = db.$client.prepare(`SELECT count(*) FROM calls c WHERE ${where}`).pluck().get();
      expect(bySql, `SQL ${JSON.stringify(extra)}`).toBe(want.length);
    }
  });
});
