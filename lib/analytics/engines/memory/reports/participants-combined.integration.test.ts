import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import { filters, type Filters } from "../../../filters";
import type { CombinedParticipantRow } from "../../../report-types";
import { openFixtureDb, randomCall, rng, startOf, writeCalls, type FixtureCall } from "../../../test-fixtures";
import { createMemoryEngine } from "../index";

/**
 * Participants across apps against an oracle in plain TypeScript over the calls written:
 * the same uids used in three apps, each uid once with the apps it is in, its calls,
 * joins, unanswered calls and minutes summed, its first and last call.
 */
let db: Db;
const calls: FixtureCall[] = [];
const BASE = 1_767_225_600;
const APP_IDS = ["app-one", "app-two", "app-three"];

beforeAll(() => {
  db = openFixtureDb("combined");
  const r = rng(21);
  for (let i = 0; i < 500; i++) {
    const c = randomCall(r, i, BASE, 40 * 86_400);
    c.appPk = 1 + Math.floor(r() * 3);
    calls.push(c);
  }
  writeCalls(db, calls);
});
afterAll(() => db?.$client.close());

function oracle(f: Filters): CombinedParticipantRow[] {
  const byUid = new Map<string, CombinedParticipantRow & { callKeys: Set<number> }>();
  calls.forEach((c, i) => {
    const start = startOf(c);
    if ((f.from !== undefined && start < f.from) || (f.to !== undefined && start >= f.to) || (f.type && c.type !== f.type)) return;
    if (f.apps.length && !f.apps.includes(APP_IDS[c.appPk - 1])) return;
    const seen = new Map<string, { joined: boolean; unanswered: boolean }>();
    for (const p of c.participants) {
      const row = byUid.get(p.uid) ?? { uid: p.uid, apps: [], calls: 0, joined: 0, unanswered: 0, audioMinutes: 0, videoMinutes: 0, totalMinutes: 0, firstCallAt: null, lastCallAt: null, callKeys: new Set<number>() };
      if (!row.apps.includes(APP_IDS[c.appPk - 1])) row.apps.push(APP_IDS[c.appPk - 1]);
      row.audioMinutes += p.audio;
      row.videoMinutes += p.video;
      row.totalMinutes += p.total;
      row.firstCallAt = row.firstCallAt === null ? start : Math.min(row.firstCallAt, start);
      row.lastCallAt = row.lastCallAt === null ? start : Math.max(row.lastCallAt, start);
      const s = seen.get(p.uid) ?? { joined: false, unanswered: false };
      s.joined ||= p.isJoined;
      s.unanswered ||= p.state === "unanswered";
      seen.set(p.uid, s);
      row.callKeys.add(i);
      byUid.set(p.uid, row);
    }
    for (const [uid, s] of seen) {
      const row = byUid.get(uid)!;
      if (s.joined) row.joined++;
      if (s.unanswered) row.unanswered++;
    }
  });
  return [...byUid.values()].map(({ callKeys, ...r }) => ({ ...r, apps: r.apps.sort(), calls: callKeys.size }));
}

describe("participants across apps", () => {
  const engine = () => createMemoryEngine({ db: () => db });
  it.each([[{}], [{ apps: ["app-one", "app-three"] }], [{ from: BASE + 10 * 86_400, to: BASE + 20 * 86_400, type: "video" }]] as Array<[Partial<Filters>]>)(
    "each uid once, with its apps and sums (%j)",
    async (partial) => {
      const f = filters({ ...partial, perPage: 1000 });
      const got = (await engine().report("participants-combined", f, { appPks: "all" })).data;
      const want = oracle(f);
      expect(want.some((r) => r.apps.length > 1)).toBe(true);
      expect(got.map((r) => r.uid).sort()).toEqual(want.map((r) => r.uid).sort());
      for (const w of want) {
        const g = got.find((r) => r.uid === w.uid)!;
        expect({ ...g, audioMinutes: 0, videoMinutes: 0, totalMinutes: 0 }).toEqual({ ...w, audioMinutes: 0, videoMinutes: 0, totalMinutes: 0 });
        for (const k of ["audioMinutes", "videoMinutes", "totalMinutes"] as const) expect(g[k]).toBeCloseTo(w[k], 2);
      }
      // Most calls first (the participants report's order), then by uid.
      expect(got.map((r) => r.calls)).toEqual([...got.map((r) => r.calls)].sort((a, b) => b - a));
    },
  );

  it("pages like the participants report", async () => {
    const all = (await engine().report("participants-combined", filters({ perPage: 1000 }), { appPks: "all" })).data;
    const second = await engine().report("participants-combined", filters({ perPage: 5, page: 2 }), { appPks: "all" });
    expect(second.data).toEqual(all.slice(5, 10));
    expect(second.meta.pagination.total).toBe(all.length);
  });
});
