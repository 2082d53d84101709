import { afterAll, describe, expect, it } from "vitest";
import * as A from "../direct";
import { getParticipantPage } from "../reports/usage";
import { setBlockBits } from "../store/store";
import { setKeepAllSums } from "./blocks";
import { DIMENSION_VALUES } from "../../../dims";
import { round3 } from "../../../report-types";
import { FIXTURE_UIDS, openFixtureDb, randomCall, rng, writeCalls } from "../../../test-fixtures";

/**
 * The participants page under filters the block sums cannot answer (scan/people-deferred.ts):
 * calls (and total minutes) of every uid from the scan — whole blocks by their entries
 * grouped by dims code (dims-entries.ts) — the other sums of the page's uids afterwards;
 * and engagement, which counts calls per uid the same way. Every page, under every
 * combination of the categorical filters, with and without a time window, by calls and by
 * minutes, both directions, must equal the page of an independent aggregate of
 * `call_participants` (merged per call and uid by SQL, summed here). The store is in tiny
 * blocks (scans beside block and superblock sums), with superblock sums kept or dropped,
 * and re-syncs move calls' entries to the end of the store.
 */
const ALL = { appPks: "all" as const };
const base = Date.UTC(2025, 0, 1) / 1000;
const SPAN = 60 * 86_400;

interface Row { app: string; uid: string; calls: number; joined: number; unanswered: number; audioMinutes: number; videoMinutes: number; totalMinutes: number; firstCallAt: number; lastCallAt: number }

describe("participants page, deferred sums", () => {
  const db = openFixtureDb("people-deferred");
  afterAll(() => {
    setBlockBits();
    setKeepAllSums(false);
    db.$client.close();
  });
  const r = rng(2024);
  // Light users (a few calls each, thousands of uids) with some heavy and hostile ones; time order, as a backfill writes.
  const makeCall = (i: number) => {
    const c = randomCall(r, i, base, SPAN);
    for (const p of c.participants) p.uid = r() < 0.05 ? FIXTURE_UIDS[Math.floor(r() * FIXTURE_UIDS.length)]! : r() < 0.15 ? `heavy-${Math.floor(r() * 12)}` : `light-${Math.floor(r() * 3000)}`;
    return c;
  };
  const calls = Array.from({ length: 3000 }, (_, i) => makeCall(i)).sort((a, b) => a.initiatedAt - b.initiatedAt);

  /** One row per (call, uid) as SQL merges the participant rows (a uid listed twice in a call counts once), with its call's columns. */
  interface Entry { appPk: number; app: string; uid: string; type: string; mode: string; status: string; receiverType: string; rec: number; pc: number; start: number; j: number; un: number; au: number; vi: number; tot: number; uids: string }
  function entries(): Entry[] {
    return db.$client.prepare(`
      WITH e AS (SELECT call_pk, uid, max(is_joined <> 0) AS j, max(coalesce(state = 'unanswered', 0)) AS un,
          sum(total_audio_minutes) AS au, sum(total_video_minutes) AS vi, sum(total_duration_minutes) AS tot
        FROM call_participants GROUP BY call_pk, uid)
      SELECT c.app_pk AS appPk, a.app_id AS app, e.uid, c.type, c.mode, c.status, c.receiver_type AS receiverType, c.has_recording AS rec,
          c.total_participants AS pc, c.start_at AS start, e.j, e.un, e.au, e.vi, e.tot,
          (SELECT json_group_array(uid) FROM call_participants q WHERE q.call_pk = c.pk) AS uids
      FROM e JOIN calls c ON c.pk = e.call_pk JOIN apps a ON a.pk = c.app_pk ORDER BY c.pk`).all() as Entry[];
  }

  /** Every matching (app, uid): calls, flags, minutes and first/last start, in the report's documented orders. */
  function reference(all: Entry[], f: A.Filters): Row[] {
    const byKey = new Map<string, Row & { appPk: number }>();
    for (const e of all) {
      const keep = (f.type === undefined || e.type === f.type) && (f.mode === undefined || e.mode === f.mode) && (f.status === undefined || e.status === f.status) &&
        (f.receiverType === undefined || e.receiverType === f.receiverType) && (f.hasRecording === undefined || e.rec === Number(f.hasRecording)) &&
        (f.participantsCount === undefined || e.pc === f.participantsCount) && (f.from === undefined || e.start >= f.from) && (f.to === undefined || e.start < f.to) &&
        (f.uid === undefined || (JSON.parse(e.uids) as string[]).includes(f.uid)) && (f.apps.length === 0 || f.apps.includes(e.app));
      if (!keep) continue;
      const key = `${e.appPk}\u0000${e.uid}`;
      const r = byKey.get(key) ?? { appPk: e.appPk, app: e.app, uid: e.uid, calls: 0, joined: 0, unanswered: 0, audioMinutes: 0, videoMinutes: 0, totalMinutes: 0, firstCallAt: e.start, lastCallAt: e.start };
      byKey.set(key, r);
      r.calls++;
      r.joined += e.j;
      r.unanswered += e.un;
      r.audioMinutes += e.au;
      r.videoMinutes += e.vi;
      r.totalMinutes += e.tot;
      r.firstCallAt = Math.min(r.firstCallAt, e.start);
      r.lastCallAt = Math.max(r.lastCallAt, e.start);
    }
    // Most calls first, then app pk, then uid in SQLite's BINARY order (UTF-8 bytes).
    const sorted = [...byKey.values()].sort((a, b) => b.calls - a.calls || a.appPk - b.appPk || Buffer.compare(Buffer.from(a.uid), Buffer.from(b.uid)));
    const rows: Row[] = sorted.map(({ appPk: _, ...r }) => ({ ...r, audioMinutes: round3(r.audioMinutes), videoMinutes: round3(r.videoMinutes), totalMinutes: round3(r.totalMinutes) }));
    // The report's documented orders (report-answerers.ts sortedParticipants): minutes, then the order above (a stable sort).
    if (f.sort === "minutes") rows.sort((a, b) => b.totalMinutes - a.totalMinutes);
    if (f.order === "asc") rows.reverse();
    return rows;
  }

  /** Every combination of the categorical filters (each dimension unset or any of its values), with varied windows, orders and pages. */
  function combinations(): A.Filters[] {
    const opt = <T,>(xs: readonly T[]) => [undefined, ...xs];
    const windows = [{}, { from: base + 9 * 86_400 + 77, to: base + 41 * 86_400 }, { from: base + 30 * 86_400 }, { to: base + 20 * 86_400 - 5 }];
    const out: A.Filters[] = [];
    let k = 0;
    for (const type of opt(DIMENSION_VALUES.type))
      for (const mode of opt(DIMENSION_VALUES.mode))
        for (const status of opt(DIMENSION_VALUES.status))
          for (const receiverType of opt(DIMENSION_VALUES.receiverType))
            for (const hasRecording of [undefined, true, false]) {
              const sort = k % 2 ? ("minutes" as const) : undefined;
              const order = (k >> 1) % 2 ? ("asc" as const) : ("desc" as const);
              out.push(A.filters({ type, mode, status, receiverType, hasRecording, ...windows[(k >> 2) % windows.length], ...(sort ? { sort } : {}), order, page: 1 + (k % 3), perPage: 25 }));
              k++;
            }
    // The other filters that scan: participants count, uid, apps; with categories.
    out.push(
      A.filters({ participantsCount: 2 }), A.filters({ participantsCount: 3, type: "video", sort: "minutes" }),
      A.filters({ uid: "heavy-3" }), A.filters({ uid: "zoë", status: "ended", order: "asc" }),
      A.filters({ apps: ["app-two"], mode: "meet" }), A.filters({ apps: ["app-one", "app-three"], receiverType: "group", sort: "minutes", page: 2, perPage: 10 }),
      A.filters({ type: "audio", perPage: 1000 }), A.filters({ status: "ended", page: 500 }),
    );
    return out;
  }

  function expectPages(label: string, sets: A.Filters[]) {
    A.resetAnalyticsStore(db);
    const all = entries();
    for (const f of sets) {
      const want = reference(all, f);
      const got = getParticipantPage(db, f, ALL);
      const from = (f.page - 1) * f.perPage;
      expect(got, `${label} ${JSON.stringify(f)}`).toEqual({ rows: want.slice(from, from + f.perPage), total: want.length });
      // Engagement counts calls per uid the same way (the grouped entries where a block allows).
      const buckets = A.getEngagement(db, f, ALL);
      const inBucket = (b: (typeof buckets)[number]) => want.filter((r) => r.calls >= b.minCalls && (b.maxCalls === null || r.calls <= b.maxCalls)).length;
      expect(buckets.map((b) => b.participants), `engagement ${label} ${JSON.stringify(f)}`).toEqual(buckets.map(inBucket));
    }
  }

  it("equals the reference page under every categorical filter combination", () => {
    setBlockBits(6); // blocks of 64 calls, superblocks of 1,024: sums, the last superblock's head and scans mixed
    writeCalls(db, calls);
    const s = A.analyticsStore(db);
    // The deferred path needs exact minutes (thousandths); the uids are light enough that superblock sums are dropped.
    expect([s.pAudio.scale, s.pVideo.scale, s.pTotal.scale]).toEqual([1000, 1000, 1000]);
    expect(s.idUid.length).toBeGreaterThan(2000);
    const sets = combinations();
    expect(sets.length).toBeGreaterThan(540);
    expectPages("dropped sums", sets);
    expect(A.analyticsStore(db).dimsPeople.filter((b) => b?.dOff).length).toBe(0);
    // Whole blocks inside a window were counted by their entries grouped by dims code, the others slot by slot.
    expect(A.analyticsStore(db).dimsEntries.filter(Boolean).length).toBeGreaterThan(20);
    // Superblock sums kept: the categorical filters add them, the unfilled tail and the other filters scan.
    setKeepAllSums(true);
    expectPages("kept sums", sets.filter((_, i) => i % 3 === 0));
    expect(A.analyticsStore(db).dimsPeople.filter((b) => b?.dOff).length).toBeGreaterThan(0);
    setKeepAllSums(false);
  }, 180_000); // some 1,300 pages and engagements on a shared box

  it("still equals it after re-syncs move calls' entries and change their uids", () => {
    const changed = calls.filter(() => r() < 0.15).map((c, i) => ({ ...makeCall(50_000 + i), appPk: c.appPk, sessionId: c.sessionId, initiatedAt: c.initiatedAt }));
    writeCalls(db, changed);
    db.$client.exec("DELETE FROM calls WHERE pk % 23 = 0");
    expectPages("after re-sync", combinations().filter((_, i) => i % 4 === 1));
  }, 120_000);
});
