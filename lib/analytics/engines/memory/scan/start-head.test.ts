import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "@/db/client";
import { callsOrder, callsOrderHead } from "../reports/calls";
import * as A from "../direct";
import { setKeepAllSums } from "./blocks";
import { kthSmallest } from "./selection";
import { resetAnalyticsStore } from "../store/load";
import { setBlockBits } from "../store/store";
import { openFixtureDb, randomCall, rng, writeCalls } from "../../../test-fixtures";

/**
 * The worker's calls CSV head by start, and the list's first pages by start (selection.ts
 * startHead), read only the blocks whose start bounds can hold them. With blocks of 32
 * slots and calls written in time order (as a backfill writes them), they must give
 * exactly the first pks of the whole order, for both directions and any filter, also
 * after re-syncs moved calls in time (loose bounds), deletes, and with fewer matches
 * than the head's size; the list's total (counted from block sums) its length.
 */
const ALL = { appPks: "all" as const };
const base = Date.UTC(2025, 0, 1) / 1000;

describe("calls CSV head by start, block by block", () => {
  const db = openFixtureDb("start-head");
  const writer = openDatabase(db.$client.name);
  beforeAll(() => setKeepAllSums(true)); // block sums for the totals whatever their key count
  afterAll(() => {
    setKeepAllSums(false);
    setBlockBits();
    db.$client.close();
    writer.$client.close();
  });

  const r = rng(41);
  const calls = Array.from({ length: 1500 }, (_, i) => randomCall(r, i, base, 120 * 86_400)).sort((a, b) => a.initiatedAt - b.initiatedAt);
  const filterSets: Array<Partial<A.Filters>> = [
    {},
    { type: "video" },
    { status: "ended", hasRecording: true },
    { from: base + 10 * 86_400, to: base + 40 * 86_400 },
    { from: base + 100 * 86_400 },
    { apps: ["app-two"], type: "audio" },
    { uid: "alice" },
    { participantsCount: 3 },
  ];

  function expectHeads(label: string) {
    for (const fs of filterSets) {
      for (const order of ["desc", "asc"] as const) {
        const f = A.filters({ ...fs, order, format: "csv" });
        const whole = Array.from(callsOrder(db, f, ALL));
        for (const n of [1, 7, 256]) {
          const { head, all } = callsOrderHead(db, f, ALL, n, false);
          expect(Array.from(head), `${label} ${JSON.stringify(fs)} ${order} n=${n}`).toEqual(whole.slice(0, n));
          expect(Array.from(all()), `${label} ${JSON.stringify(fs)} ${order} all`).toEqual(whole);
        }
        // The list's first pages by start come from the same walk, its total from the block sums.
        const session = new Map(db.$client.prepare("SELECT pk, session_id FROM calls").raw().all() as Array<[number, string]>);
        for (const [page, perPage] of [[1, 50], [3, 7], [2, 400]]) {
          const got = A.getCalls(db, A.filters({ ...fs, order, sort: "start", page, perPage }), ALL);
          const want = whole.slice((page - 1) * perPage, page * perPage).map((pk) => session.get(pk));
          expect(got.data.map((r) => r.sessionId), `${label} ${JSON.stringify(fs)} ${order} page ${page}`).toEqual(want);
          expect(got.meta.pagination.total).toBe(whole.length);
        }
      }
    }
  }

  it("equals the whole order's first pks while another connection writes", () => {
    setBlockBits(5);
    resetAnalyticsStore(db);
    writeCalls(writer, calls);
    expect(A.analyticsStore(db).blockMinStart.length).toBeGreaterThan(40);
    expectHeads("time-ordered");
    // Re-synced calls move in time: their blocks' bounds widen (loose, never wrong).
    const moved = calls.filter(() => r() < 0.05).map((c, i) => ({ ...randomCall(r, 50_000 + i, base, 120 * 86_400), appPk: c.appPk, sessionId: c.sessionId }));
    writeCalls(writer, moved);
    expectHeads("after re-sync");
    writer.$client.exec("DELETE FROM calls WHERE pk % 7 = 0");
    expectHeads("after deletes");
  });

  it("keeps ties at the n-th start in pk order (only the starts at least as good as the n-th are sorted)", () => {
    // Hundreds of calls within half a minute at either end of the data: most heads end inside a run of equal starts.
    const ties = [base + 130 * 86_400, base - 86_400].flatMap((at, k) => Array.from({ length: 300 }, (_, i) => randomCall(r, 90_000 + k * 1000 + i, at, 30)));
    writeCalls(writer, ties);
    expectHeads("ties");
  });

  it("kthSmallest selects as a sort does", () => {
    for (const m of [1, 2, 3, 10, 257]) {
      const values = Array.from({ length: m }, () => Math.floor(r() * 20));
      const sorted = [...values].sort((a, b) => a - b);
      for (let k = 0; k < m; k++) expect(kthSmallest(Float64Array.from(values), k), `m=${m} k=${k}`).toBe(sorted[k]);
    }
  });
});
