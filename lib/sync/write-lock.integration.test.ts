import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SyncHarness as Harness } from "./test-sync";
import type { PendingCall } from "./pending-rows";

process.env.AUTH_SECRET ??= "integration-test-secret-at-least-32-characters";
process.env.LOG_LEVEL ??= "silent";

const { fastClient, getAppById, openDatabase, startSyncHarness, syncApp } = await import("./test-sync");
const { workerSink } = await import("./write-sink");

/**
 * Issue 18: a 10M-call backfill failed with "database is locked" while only its own
 * process wrote to the file. The write worker's transactions began DEFERRED and read
 * first; upgrading a read transaction to a write one never waits for the busy timeout
 * (SQLite refuses at once: two upgrading readers would wait on each other forever). The
 * sync thread's lease renewal, an UPDATE of sync_locks every 15 s on the other connection
 * of the same process, held the write lock at such a moment: on a long run, with the disk
 * under load, that sooner or later happens.
 */
let h: Harness;
const CALLS = 12_000;

beforeAll(async () => {
  h = await startSyncHarness({ seed: 5, now: 1_780_000_000, apps: [{ appId: "long", count: CALLS }] });
});
afterAll(async () => {
  await h?.close();
});

/** A row the writer takes: one call without participants. */
const row = (i: number): PendingCall => ({
  call: {
    sessionId: `lock-${i}`, mid: null, type: "audio", mode: "call", status: "ended", initiator: "a", receiver: "b", receiverType: "user",
    initiatedAt: 1_700_000_000 + i, startedAt: 1_700_000_001 + i, endedAt: 1_700_000_050 + i, startAt: 1_700_000_001 + i, hasRecording: false,
    totalAudioMinutes: 1, totalVideoMinutes: 0, totalDurationMinutes: 0.8, durationSeconds: 49, totalParticipants: 2, participants: [],
  },
  rawJson: "{}", hash: `hash-${i}`, participantExtras: [],
});

describe("the write lock during a backfill (issue 18)", () => {
  it("a write batch waits for another connection's write lock instead of failing at once", async () => {
    const { db, file } = h.freshDb();
    const app = await h.register(db, "long");
    const sink = workerSink(db, app.pk)!;
    const renewal = openDatabase(file, { migrate: false });
    try {
      // The worker is up (its first batch is stored) before the lock is taken.
      sink.stage([row(0)]);
      await expect(sink.commit()).resolves.toMatchObject({ inserted: 1 });
      // The lease renewal, held open: the sync thread's connection has the write lock.
      renewal.$client.exec("BEGIN IMMEDIATE");
      renewal.$client.prepare("INSERT INTO sync_locks (app_pk, owner, acquired_ms, expires_ms) VALUES (?, 'me', 0, 1)").run(app.pk);
      sink.stage(Array.from({ length: 50 }, (_, i) => row(i + 1)));
      const committed = sink.commit();
      // Let go well within the busy timeout (5 s): a writer that waits for it succeeds.
      setTimeout(() => renewal.$client.exec("COMMIT"), 150);
      await expect(committed).resolves.toMatchObject({ inserted: 50, refused: [] });
    } finally {
      await sink.close();
      if (renewal.$client.inTransaction) renewal.$client.exec("ROLLBACK");
      renewal.$client.close();
    }
    expect(db.$client.prepare("SELECT count(*) FROM calls WHERE app_pk = ?").pluck().get(app.pk)).toBe(51);
  });

  it("a backfill survives lease renewals that hold the write lock while the worker writes", async () => {
    const t = await h.truth("long");
    const { db } = h.freshDb();
    await h.register(db, "long");
    // Every renewal of this connection holds the write lock for 40 ms (a slow disk under a
    // long backfill's write-back): a TEMP trigger fires for this connection's writes only.
    db.$client.function("stall", () => {
      const until = Date.now() + 40;
      while (Date.now() < until);
      return 0;
    });
    db.$client.exec("CREATE TEMP TRIGGER stall_renewal AFTER UPDATE ON main.sync_locks BEGIN SELECT stall(); END");
    let renewals = 0;
    db.$client.function("count_renewal", () => ++renewals);
    db.$client.exec("CREATE TEMP TRIGGER count_renewal AFTER UPDATE ON main.sync_locks BEGIN SELECT count_renewal(); END");
    // A 400 ms lease is renewed every 100 ms: renewals all through the backfill, which
    // takes about a second on a quiet machine (a 1 s lease gave only three renewals).
    const r = await syncApp(db, (await getAppById(db, "long"))!, { trigger: "test", perPage: 500, batchSize: 500, leaseMs: 400, writer: "worker", client: fastClient });
    expect(r.error).toBeNull();
    expect(r.status).toBe("succeeded");
    expect(renewals).toBeGreaterThan(3);
    h.expectSame(db, "long", t);
  });
});
