import { afterAll, describe, expect, it } from "vitest";
import * as A from "../direct";
import { resolveApps } from "../../../scope";
import { MAX_CROSSINGS } from "../../../report-types";
import { select, startExtentOf } from "../scan/selection";
import { openFixtureDb, randomCall, rng, writeCalls } from "../../../test-fixtures";

/**
 * The daily report with an open `from` or `to` takes the range from the store's start
 * bounds and drops the empty days at the open ends (usage.ts openRange): its answer must
 * be the one of the same report asked with the matching calls' own extent written out
 * (the plain path: a pass for the extent, then the days of it). Filters that keep calls
 * far from the store's ends make the bounds loose on purpose; a call decades back makes
 * the range too long and takes the extent pass. The heatmap's open window comes from a
 * fused pass (scan/heat.ts: heatQuartersOf under a filter, heatExtentOf on apps only), checked
 * against a selection walked slot by slot.
 */
const ALL = { appPks: "all" as const };
const base = Date.UTC(2025, 0, 1) / 1000;
const ZONES = ["UTC", "Europe/Berlin", "Asia/Kathmandu", "America/St_Johns", "Pacific/Chatham"];

describe("daily report and heatmap with an open end", () => {
  const db = openFixtureDb("open-range");
  afterAll(() => db.$client.close());
  const r = rng(77);
  writeCalls(db, Array.from({ length: 1500 }, (_, i) => randomCall(r, i, base, 120 * 86_400)));

  const sets = [
    A.filters(),
    A.filters({ type: "video", status: "ended" }),
    A.filters({ mode: "meet", apps: ["app-two"] }),
    A.filters({ receiverType: "group", participantsCount: 2 }),
    A.filters({ uid: "alice" }),
    A.filters({ uid: "nobody-at-all" }),
    A.filters({ from: base + 40 * 86_400 + 123 }),
    A.filters({ to: base + 50 * 86_400 - 77, type: "audio" }),
    A.filters({ from: base + 200 * 86_400 }),
    A.filters({ to: base - 86_400 }),
  ];

  /** The same report with the matching calls' extent as an explicit window. */
  function explicit(f: A.Filters): ReturnType<typeof A.getDailyUsage> {
    const { count, min, max } = startExtentOf(db, f, resolveApps(db, f, ALL));
    if (count === 0) return [];
    return A.getDailyUsage(db, { ...f, from: f.from ?? Math.floor(min / 900) * 900, to: f.to ?? Math.floor(max / 900) * 900 + 900 }, ALL);
  }

  it("answers as the matching calls' own extent does, in zones on quarter and half hours", () => {
    for (const f of sets) {
      for (const tz of ZONES) {
        const got = A.getDailyUsage(db, { ...f, tz }, ALL);
        expect(got, `${JSON.stringify(f)} ${tz}`).toEqual(explicit({ ...f, tz }));
      }
    }
    // Not vacuous: the filtered answers start after the store's first day and end before its last.
    const all = A.getDailyUsage(db, A.filters(), ALL);
    const late = A.getDailyUsage(db, A.filters({ from: base + 40 * 86_400 + 123 }), ALL);
    expect(all.length).toBeGreaterThan(100);
    expect(late[0]!.date > all[0]!.date).toBe(true);
    expect(late[0]!.calls).toBeGreaterThan(0);
    expect(A.getDailyUsage(db, A.filters({ uid: "alice" }), ALL).at(-1)!.calls).toBeGreaterThan(0);
  });

  it("gives the heatmap the window of the matching calls' first start to last quarter run", () => {
    for (const f of sets.filter((x) => x.from === undefined && x.to === undefined)) {
      // The window as select() and a walk over its slots find it.
      const { store: s, sel, count } = select(db, f, resolveApps(db, f, ALL), { ignoreTime: true });
      let min = Infinity;
      let max = -Infinity;
      for (let k = 0; k < count; k++) {
        const t = s.start.a[sel[k]!]!;
        const q0 = Math.floor(t / 900);
        min = Math.min(min, q0);
        max = Math.max(max, Math.max(q0, Math.min(Math.floor((t + s.span.a[sel[k]!]! - 1) / 900), q0 + MAX_CROSSINGS)));
      }
      for (const tz of ["Europe/Berlin", "Asia/Kathmandu"]) {
        const got = A.getConcurrencyHeatmap(db, { ...f, tz }, ALL);
        const want = count === 0 ? A.getConcurrencyHeatmap(db, { ...f, tz, from: 0, to: 0 }, ALL) : A.getConcurrencyHeatmap(db, { ...f, tz, from: min * 900, to: max * 900 + 900 }, ALL);
        expect(got, `${JSON.stringify(f)} ${tz}`).toEqual(want);
      }
    }
  });

  it("takes the extent pass when the store spans more than the longest range", () => {
    const old = randomCall(r, 99_999, Date.UTC(1995, 5, 1) / 1000, 86_400);
    writeCalls(db, [{ ...old, type: "audio", mode: "call" }]);
    for (const f of [A.filters({ type: "video" }), A.filters({ type: "audio" }), A.filters({ from: base })]) {
      expect(A.getDailyUsage(db, f, ALL), JSON.stringify(f)).toEqual(explicit(f));
    }
    expect(A.getDailyUsage(db, A.filters({ type: "video" }), ALL)[0]!.date.startsWith("2025")).toBe(true);
  });
});
