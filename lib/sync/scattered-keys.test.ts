/**
 * Session ids that do not follow time (decision 0027): the write worker tells pages of
 * scattered ids by their order, writes them in one transaction per commit with a page
 * cache sized for the session index, and stores exactly what the inline writer stores.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateCallAt, makeContext } from "@/lib/emulator/generator";
import type { SessionIdOrder } from "@/lib/emulator/session-ids";
import { keysScattered, scatteredCacheKiB, BACKFILL_CACHE_KIB, SCATTERED_CACHE_MAX_KIB } from "./scattered-keys";
import type { SyncHarness } from "./test-sync";
import { W, type WriteRow } from "./pending-rows";

process.env.AUTH_SECRET ??= "integration-test-secret-at-least-32-characters";
process.env.LOG_LEVEL ??= "silent";

const { fastClient, getAppById, startSyncHarness, syncApp } = await import("./test-sync");

/** Rows carrying only their session ids, in the order an upstream serves them (newest first). */
function servedIds(sessionIds: SessionIdOrder, n: number): WriteRow[] {
  const ctx = makeContext({ appId: "order", seed: 2, count: n, now: 1_780_000_000, months: 10, mix: "platform", sessionIds });
  const calls = Array.from({ length: n }, (_, s) => generateCallAt(ctx, s));
  calls.sort((a, b) => b.initiatedAt - a.initiatedAt || (a.sessionId < b.sessionId ? 1 : -1));
  return calls.map((c) => {
    const row: unknown[] = [];
    row[W.sessionId] = c.sessionId;
    return row;
  });
}

describe("telling scattered session ids", () => {
  it("pages of ids that follow time are ordered, newest or oldest first; random ids are scattered", () => {
    const time = servedIds("time", 1000);
    expect(keysScattered(time)).toBe(false);
    expect(keysScattered([...time].reverse())).toBe(false);
    expect(keysScattered(servedIds("random", 1000))).toBe(true);
    // Too few to tell: written at once, as before.
    expect(keysScattered(servedIds("random", 10))).toBe(false);
  });

  it("sizes the page cache for the app's part of the session index, between 16 and 96 MB", () => {
    expect(scatteredCacheKiB(1_000, 36)).toBe(BACKFILL_CACHE_KIB);
    const at1M = scatteredCacheKiB(1_000_000, 36);
    expect(at1M).toBeGreaterThan(BACKFILL_CACHE_KIB);
    expect(at1M).toBeLessThan(SCATTERED_CACHE_MAX_KIB);
    expect(scatteredCacheKiB(2_000_000, 36)).toBeGreaterThan(at1M);
    expect(scatteredCacheKiB(10_000_000, 36)).toBe(SCATTERED_CACHE_MAX_KIB);
  });
});

describe("the write worker with an upstream's random session ids", () => {
  const CALLS = 6_000;
  let time: SyncHarness;
  let random: SyncHarness;
  beforeAll(async () => {
    [time, random] = await Promise.all([
      startSyncHarness({ seed: 8, now: 1_780_000_000, apps: [{ appId: "ids", count: CALLS }] }),
      startSyncHarness({ seed: 8, now: 1_780_000_000, apps: [{ appId: "ids", count: CALLS }], sessionIds: "random" }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([time?.close(), random?.close()]);
  });

  /** Every stored row of the app, pks and change log included; the write stamps apart (they are the clock's). */
  function dump(h: SyncHarness, db: ReturnType<SyncHarness["freshDb"]>["db"]) {
    const s = db.$client;
    const calls = s.prepare("SELECT * FROM calls ORDER BY pk").all() as Array<Record<string, unknown>>;
    const stamps = calls.map((c) => c.first_seen_ms);
    for (const c of calls) {
      expect(c.updated_ms).toBe(c.first_seen_ms);
      delete c.first_seen_ms;
      delete c.updated_ms;
    }
    return {
      calls,
      participants: s.prepare("SELECT * FROM call_participants ORDER BY call_pk, seq").all(),
      changes: s.prepare("SELECT * FROM analytics_changes ORDER BY seq").all(),
      stamps,
      figures: h.warehouse(db, "ids"),
    };
  }

  async function sync(h: SyncHarness, writer: "worker" | "inline") {
    const { db } = h.freshDb();
    await h.register(db, "ids");
    const r = await syncApp(db, (await getAppById(db, "ids"))!, { trigger: "test", perPage: 1000, batchSize: 4000, writer, client: fastClient });
    expect(r).toMatchObject({ status: "succeeded", error: null, fetched: CALLS });
    return { db, r };
  }

  it("stores exactly what the inline writer stores, a transaction per commit instead of per page", async () => {
    const truth = await random.truth("ids");
    const worker = await sync(random, "worker");
    const inline = await sync(random, "inline");
    random.expectSame(worker.db, "ids", truth);
    const a = dump(random, worker.db);
    const b = dump(random, inline.db);
    expect(a.calls).toEqual(b.calls);
    expect(a.participants).toEqual(b.participants);
    expect(a.changes).toEqual(b.changes);
    expect(a.calls.every((c) => /^[0-9a-f]{8}-/.test(String(c.session_id)))).toBe(true);
    // One stamp a write transaction: the worker wrote the six pages in two (4,000 + 2,000
    // calls, the sync's commits), where ids that follow time take one a page.
    expect(new Set(a.stamps).size).toBe(2);
    const ordered = await sync(time, "worker");
    expect(new Set(dump(time, ordered.db).stamps).size).toBe(6);
  });

  it("still refuses only the record the database refuses when the pages wait for the commit", async () => {
    const truth = await random.truth("ids");
    const { db } = random.freshDb();
    await random.register(db, "ids");
    // A call in the middle of the third page: its batch is written again call by call.
    const victim = (await random.emu.admin.truth("ids"))[2_500].sessionId as string;
    db.$client.exec(`CREATE TRIGGER test_refuse BEFORE INSERT ON calls WHEN new.session_id = '${victim}' BEGIN SELECT RAISE(ABORT, 'refused for the test'); END`);
    const r = await syncApp(db, (await getAppById(db, "ids"))!, { trigger: "test", perPage: 1000, batchSize: 4000, writer: "worker", client: fastClient });
    expect(r).toMatchObject({ status: "succeeded", inserted: CALLS - 1, skipped: 1 });
    expect(r.skippedRecords).toEqual([{ sessionId: victim, reason: expect.stringMatching(/refused for the test/) }]);
    const w = random.warehouse(db, "ids");
    expect(w.calls).toBe(truth.calls - 1);
    expect(w.participants).toBe(truth.participants - truth.participantsOf.get(victim)!);
  });
});
