import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "@/db/client";
import * as A from "../direct";
import { setKeepAllSums } from "./blocks";
import { setBlockBits } from "../store/store";
import { openFixtureDb, randomCall, rng, writeCalls, type FixtureCall } from "../../../test-fixtures";

/**
 * Block sums: the participants and engagement reports add a block's per-uid sums where
 * the filter keeps every call of the block, and a superblock's per-(dims code, uid) sums
 * where it filters on categories only (people.ts peopleOf), and the unfilled last
 * superblock's full blocks' sums likewise; the daily report adds a block's
 * per-(app, quarter hour) sums where it filters on apps and time only (dailyOf), the
 * heatmap its per-(app, quarter hour) counts where it filters on apps only; totals,
 * breakdowns, durations and per app add a block's per-(app, cell) sums where it filters on
 * categories, apps and time, and skip blocks whose starts lie outside the window
 * (cubeOf). With small blocks (32, 128 and 256 slots), their answers must equal those
 * of a store with one block (every call and entry added one by one, no block skipped),
 * while another connection writes. Calls are written in time order, as a backfill
 * does, so that blocks cover narrow spans of time and windows skip some.
 */

type Db = ReturnType<typeof openDatabase>;
const ALL = { appPks: "all" as const };
const base = Date.UTC(2025, 0, 1) / 1000;

function reports(db: Db) {
  const sets = [
    A.filters(),
    A.filters({ from: base + 3 * 86_400 + 1234, to: base + 60 * 86_400 - 77 }),
    A.filters({ apps: ["app-one", "app-three"] }),
    A.filters({ from: base, to: base + 45 * 86_400, apps: ["app-two"] }),
    A.filters({ type: "video" }),
    A.filters({ type: "video", status: "ended" }),
    A.filters({ mode: "meet", hasRecording: false, apps: ["app-one", "app-two"] }),
    A.filters({ receiverType: "group", from: base + 20 * 86_400, to: base + 80 * 86_400 }),
    A.filters({ status: "ended", participantsCount: 2 }),
    A.filters({ uid: "alice" }),
  ];
  return sets.map((f) => ({
    daily: ["UTC", "Asia/Kolkata", "Asia/Kathmandu", "Europe/Berlin"].map((tz) => A.getDailyUsage(db, { ...f, tz }, ALL)),
    heatmap: ["Asia/Kolkata", "Europe/Berlin"].map((tz) => A.getConcurrencyHeatmap(db, { ...f, tz }, ALL)),
    participants: A.getParticipantUsage(db, f, ALL),
    engagement: A.getEngagement(db, f, ALL),
    totals: A.getTotals(db, f, ALL),
    durations: A.getDurationDistribution(db, f, ALL),
    perApp: A.getAppUsage(db, f, ALL),
    breakdowns: A.getBreakdowns(db, f, ALL),
  }));
}

describe.each([5, 7, 8])("block sums (blocks of 2^%i slots)", (bits) => {
  const reader = openFixtureDb(`people-blocks-${bits}`);
  const file = reader.$client.name;
  const writer = openDatabase(file);
  // Superblock and cube sums kept whatever their key count: the fixtures' few calls
  // repeat uids and cells less than a real warehouse's.
  beforeAll(() => setKeepAllSums(true));
  afterAll(() => {
    setKeepAllSums(false);
    setBlockBits();
    reader.$client.close();
    writer.$client.close();
  });

  /** The reader (tiny blocks, kept current incrementally) answers as a block-free full load. */
  function expectSame(label: string) {
    setBlockBits(bits);
    const got = reports(reader);
    setBlockBits(30);
    const plain = openDatabase(file);
    try {
      expect(got, label).toEqual(reports(plain));
    } finally {
      plain.$client.close();
      setBlockBits(bits);
    }
  }

  const r = rng(29 + bits);
  // 1,200 calls over 90 days, and 600 more in the 4 days from the one before Berlin's
  // change to summer time (2025-03-30 01:00 UTC): blocks of quarter sums on both sides.
  const dst = Date.UTC(2025, 2, 29) / 1000;
  const calls: FixtureCall[] = [
    ...Array.from({ length: 1200 }, (_, i) => randomCall(r, i, base, 90 * 86_400)),
    ...Array.from({ length: 600 }, (_, i) => randomCall(r, 5000 + i, dst, 4 * 86_400)),
  ].sort((a, b) => a.initiatedAt - b.initiatedAt);

  it("equals entry-by-entry sums, and follows writes to blocks already summed", () => {
    setBlockBits(bits);
    A.resetAnalyticsStore(reader);
    writeCalls(writer, calls.slice(0, 1500));
    expectSame("initial");
    // Blocks of 32 slots hold too few repeats of a uid to be summed; superblocks of 512
    // (1,500 calls fill two) are, per dims code.
    if (bits === 5) expect(A.analyticsStore(reader).dimsPeople.filter((b) => b?.dOff).length).toBeGreaterThan(0);
    else expect(A.analyticsStore(reader).peopleBlocks.filter((b) => b?.ids).length).toBeGreaterThan(0);
    // The unfilled last superblock's full blocks are summed per (dims code, uid) too.
    expect(A.analyticsStore(reader).dimsPeopleHead?.sums.dOff).toBeTruthy();
    expect(A.analyticsStore(reader).quarterBlocks.filter((b) => b?.sums).length).toBeGreaterThan(0);
    expect(A.analyticsStore(reader).cubeBlocks.filter((b) => b?.sums).length).toBeGreaterThan(0);
    expect(A.analyticsStore(reader).heatBlocks.filter((b) => b?.starts).length).toBeGreaterThan(0);
    writeCalls(writer, calls.slice(1500));
    const changed = calls.filter(() => r() < 0.1).map((c, i) => ({ ...randomCall(r, 100_000 + i, base, 90 * 86_400), appPk: c.appPk, sessionId: c.sessionId }));
    writeCalls(writer, changed);
    expectSame("after re-sync");
    writer.$client.exec("UPDATE call_participants SET uid = 'renamed', total_video_minutes = total_video_minutes + 1.25 WHERE (call_pk * 31 + seq) % 53 = 0");
    writer.$client.exec("DELETE FROM calls WHERE pk % 17 = 0");
    expectSame("edits and deletes");
    expect(A.analyticsStore(reader).fullLoads).toBe(1);
  });

  it("adds entries one by one once minutes are not exact thousandths", () => {
    writer.$client.exec("UPDATE call_participants SET total_audio_minutes = total_audio_minutes + 1e-7 WHERE call_pk % 7 = 0");
    expectSame("odd minutes");
  });
});
