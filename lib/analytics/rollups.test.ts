import { afterAll, describe, expect, it } from "vitest";
import { rebuildAnalyticsRollups } from "./maintenance";
import { openFixtureDb, randomCall, rng, writeCalls, type FixtureCall } from "./test-fixtures";

const TABLES = {
  analytics_call_q15: "app_pk, bucket, dims, pc",
  analytics_call_day: "app_pk, day, dims, pc, dur_bucket",
  analytics_participant_day: "app_pk, day, uid, dims",
  analytics_participant_month: "app_pk, month, uid, dims",
};

function snapshot(db: ReturnType<typeof openFixtureDb>) {
  const out: Record<string, Array<Record<string, unknown>>> = {};
  for (const [t, key] of Object.entries(TABLES)) {
    out[t] = (db.$client.prepare(`SELECT * FROM ${t} ORDER BY ${key}`).all() as Array<Record<string, unknown>>).map((row) =>
      Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === "number" ? Math.round(v * 1000) / 1000 + 0 : v])),
    );
  }
  return out;
}

describe("rollup triggers", () => {
  const db = openFixtureDb("rollups");
  afterAll(() => db.$client.close());

  it("stay equal to a full rebuild through inserts, re-syncs, webhook recordings and deletes", () => {
    const r = rng(7);
    const base = Date.UTC(2025, 0, 1) / 1000;
    const calls: FixtureCall[] = Array.from({ length: 1500 }, (_, i) => randomCall(r, i, base, 90 * 86_400));
    writeCalls(db, calls);
    // Re-sync with changes: ongoing calls end, some get new participants and minutes, some move in time.
    const changed = calls.filter(() => r() < 0.3).map((c, i) => {
      const n = randomCall(r, 100_000 + i, base, 90 * 86_400);
      return { ...n, appPk: c.appPk, sessionId: c.sessionId, initiatedAt: r() < 0.5 ? c.initiatedAt : n.initiatedAt };
    });
    writeCalls(db, changed);
    // Webhook recordings.
    const setRec = db.$client.prepare("UPDATE calls SET has_recording = 1 WHERE app_pk = ? AND session_id = ? AND has_recording = 0");
    for (const c of calls.filter(() => r() < 0.2)) setRec.run(c.appPk, c.sessionId);
    // A participant row edited in place, and deletes.
    db.$client.exec("UPDATE call_participants SET uid = 'renamed', total_audio_minutes = total_audio_minutes + 1 WHERE pk % 97 = 0");
    db.$client.exec("DELETE FROM call_participants WHERE pk % 89 = 0");
    db.$client.exec("DELETE FROM calls WHERE pk % 13 = 0");
    const viaTriggers = snapshot(db);
    rebuildAnalyticsRollups(db);
    const rebuilt = snapshot(db);
    for (const t of Object.keys(TABLES)) {
      expect(viaTriggers[t].length, t).toBe(rebuilt[t].length);
      expect(viaTriggers[t], t).toEqual(rebuilt[t]);
    }
  });
});
