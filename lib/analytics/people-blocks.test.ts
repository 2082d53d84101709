import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "@/db/client";
import * as A from "./index";
import { setBlockBits } from "./store";
import { openFixtureDb, randomCall, rng, writeCalls, type FixtureCall } from "./test-fixtures";

/**
 * The participants and engagement reports add a block's per-uid sums where the filter
 * keeps every call of the block (scan.ts peopleOf), and totals skip blocks whose starts
 * lie outside the window (scan.ts cubeOf). With small blocks (128 and 256 slots), their
 * answers must equal those of a store with one block (every entry added one by one, no
 * block skipped), while another connection writes. Calls are written in time order, as
 * a backfill does, so that blocks cover narrow spans of time and windows skip some.
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
    A.filters({ uid: "alice" }),
  ];
  return sets.map((f) => ({
    participants: A.getParticipantUsage(db, f, ALL),
    engagement: A.getEngagement(db, f, ALL),
    totals: A.getTotals(db, f, ALL),
    breakdowns: A.getBreakdowns(db, f, ALL),
  }));
}

describe.each([7, 8])("participants' block sums (blocks of 2^%i slots)", (bits) => {
  const reader = openFixtureDb(`people-blocks-${bits}`);
  const file = reader.$client.name;
  const writer = openDatabase(file);
  afterAll(() => {
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
  const calls: FixtureCall[] = Array.from({ length: 1200 }, (_, i) => randomCall(r, i, base, 90 * 86_400)).sort((a, b) => a.initiatedAt - b.initiatedAt);

  it("equals entry-by-entry sums, and follows writes to blocks already summed", () => {
    setBlockBits(bits);
    A.resetAnalyticsStore(reader);
    writeCalls(writer, calls.slice(0, 900));
    expectSame("initial");
    expect(A.analyticsStore(reader).peopleBlocks.filter((b) => b?.ids).length).toBeGreaterThan(0);
    writeCalls(writer, calls.slice(900));
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
