import Database from "better-sqlite3";
import { sql } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { getHealth } from "@/lib/health/health";
import { resetWriteStateForTests } from "./write-state";
import { messageSent, recordingGenerated, type Delivery } from "./test-deliveries";
import { getEventCounts } from "./queries";
import { postJson, startHarness, type Harness, type RawResponse } from "./test-harness";

/**
 * A warehouse that stops taking writes, through the real driver on a real file and
 * the real HTTP handler: full (the ingest connection's `max_page_count` pinned to the
 * file's size: SQLite answers SQLITE_FULL exactly as on a full disk) and locked (a
 * second connection holding BEGIN EXCLUSIVE past the busy timeout). No delivery is
 * answered 200 unless stored, nothing stored is lost, and everything recovers by
 * itself. lib/health/disk-full.server.test.ts does the same on a real full file
 * system against the production server.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});
afterEach(() => {
  h.ingestSqlite.pragma("max_page_count = 1073741823");
  resetWriteStateForTests();
});

const A = { appId: "acme" };
const padding = "x".repeat(12_000); // each delivery needs pages of its own
let n = 0;
/** A chat message or a recording (whose effect runs in a savepoint), every one distinct. */
function nextDelivery(tag: string): { id: string; body: Delivery } {
  n += 1;
  const id = `${tag}-${n}`;
  const body = n % 3 === 0 ? recordingGenerated(A, id, 1_700_000_000 + n) : messageSent(A, id, 1_700_000_000 + n, padding);
  return { id, body };
}

const storedIds = () =>
  new Set(h.db.all<{ id: string }>(sql`SELECT coalesce(json_extract(body, '$.data.message.id'), json_extract(body, '$.data.sessionId')) id FROM webhook_deliveries`).map((r) => r.id));
const health = () => getHealth(() => h.db, { probeBusyTimeoutMs: 100 });

/** Sends each again, honouring Retry-After, until all are answered 200 (bounded). */
async function resendUntilStored(pending: Array<{ id: string; body: Delivery }>): Promise<RawResponse[]> {
  const answers: RawResponse[] = [];
  for (const d of pending) {
    for (let attempt = 0; ; attempt++) {
      const res = await postJson(h.baseUrl, "acme", d.body);
      if (res.status === 200) {
        answers.push(res);
        break;
      }
      expect(res.status).toBe(503);
      if (attempt > 20) throw new Error(`${d.id} still refused after ${attempt} tries`);
      await new Promise((r) => setTimeout(r, Number(res.headers["retry-after"]) * 1000));
    }
  }
  return answers;
}

function checkInvariants(acked: Set<string>): void {
  expect(h.db.$client.pragma("integrity_check", { simple: true })).toBe("ok");
  const stored = storedIds();
  for (const id of acked) expect(stored.has(id), `${id} was answered 200 but is not stored`).toBe(true);
  const totals = h.db.get<{ deliveries: number; counted: number; failed: number; recordings: number; recordingDeliveries: number }>(sql`SELECT
    (SELECT count(*) FROM webhook_deliveries) deliveries,
    (SELECT coalesce(sum(count), 0) FROM event_counts) counted,
    (SELECT count(*) FROM webhook_deliveries WHERE outcome = 'failed') failed,
    (SELECT count(*) FROM recordings) recordings,
    (SELECT count(*) FROM webhook_deliveries WHERE trigger = 'recording_generated') recordingDeliveries`)!;
  // Each stored delivery counted once, none stored without its effect.
  expect(totals.counted).toBe(totals.deliveries);
  expect(totals.failed).toBe(0);
  expect(totals.recordings).toBe(totals.recordingDeliveries);
}

describe("a full warehouse", () => {
  it("answers 503 + Retry-After for what it cannot store, keeps what it had, reports it, and recovers once there is room", async () => {
    const acked = new Set<string>();
    for (let i = 0; i < 30; i++) {
      const d = nextDelivery("before-full");
      expect((await postJson(h.baseUrl, "acme", d.body)).status).toBe(200);
      acked.add(d.id);
    }
    expect(await health()).toMatchObject({ status: "ok", database: "ok" });

    // No page may be added from here on: the disk is full.
    h.ingestSqlite.pragma(`max_page_count = ${Number(h.ingestSqlite.pragma("page_count", { simple: true }))}`);
    const refused: Array<{ id: string; body: Delivery }> = [];
    for (let i = 0; i < 60 && refused.length < 10; i++) {
      const d = nextDelivery("while-full");
      const res = await postJson(h.baseUrl, "acme", d.body);
      expect([200, 503]).toContain(res.status);
      if (res.status === 200) {
        acked.add(d.id);
      } else {
        expect(res.json?.error?.code).toBe("unavailable");
        expect(Number(res.headers["retry-after"])).toBeGreaterThanOrEqual(1);
        expect(res.text).not.toMatch(/SQLITE/);
        refused.push(d);
      }
    }
    expect(refused.length).toBe(10);
    const stored = storedIds();
    for (const d of refused) expect(stored.has(d.id), `${d.id} was refused but stored`).toBe(false);
    expect(await health()).toMatchObject({ status: "unavailable", database: "not_writable", reason: "disk_full", message: expect.stringMatching(/disk .* full/i) });
    // What is stored still reads.
    const counted = getEventCounts(h.db, [h.appPk.acme], { from: 0, to: 2_000_000_000 }).reduce((a, c) => a + c.count, 0);
    expect(counted).toBe(stored.size);
    checkInvariants(acked);

    // Space is freed: the refused deliveries, sent again, are stored once each.
    h.ingestSqlite.pragma("max_page_count = 1073741823");
    const answers = await resendUntilStored(refused);
    expect(answers.every((a) => a.json?.status === "stored")).toBe(true);
    for (const d of refused) acked.add(d.id);
    checkInvariants(acked);
    expect(await health()).toMatchObject({ status: "ok", database: "ok" });
  });
});

describe("a disk that fills while a delivery's effect is applied", () => {
  it("stores neither the delivery nor a half of it: 503, and the repeat applies it whole", async () => {
    const acked = new Set<string>();
    // A few free pages for the delivery row, then none: the recording's effect (made
    // bigger by a trigger of this connection only) is what finds the disk full.
    h.ingestSqlite.exec(`CREATE TABLE IF NOT EXISTS scratch (b BLOB);
      INSERT INTO scratch VALUES (randomblob(16000)); DELETE FROM scratch;
      CREATE TEMP TRIGGER grow_on_recording AFTER INSERT ON main.recordings BEGIN INSERT INTO scratch VALUES (randomblob(40000)); END;`);
    try {
      h.ingestSqlite.pragma(`max_page_count = ${Number(h.ingestSqlite.pragma("page_count", { simple: true }))}`);
      const d = { id: "effect-full", body: recordingGenerated(A, "effect-full", 1_700_000_777) };
      const res = await postJson(h.baseUrl, "acme", d.body);
      expect(res.status).toBe(503);
      expect(storedIds().has(d.id)).toBe(false);
      checkInvariants(acked);

      h.ingestSqlite.pragma("max_page_count = 1073741823");
      await resendUntilStored([d]);
      acked.add(d.id);
      checkInvariants(acked);
    } finally {
      h.ingestSqlite.exec("DROP TRIGGER IF EXISTS temp.grow_on_recording; DROP TABLE IF EXISTS scratch;");
    }
  });
});

describe("a warehouse locked by another process", () => {
  it("answers 503 + Retry-After at once after the first wait, keeps reads going, reports it, and recovers when the lock goes", async () => {
    const acked = new Set<string>();
    const before = nextDelivery("before-lock");
    expect((await postJson(h.baseUrl, "acme", before.body)).status).toBe(200);
    acked.add(before.id);

    const locker = new Database(h.file);
    locker.pragma("busy_timeout = 0");
    try {
      locker.exec("BEGIN EXCLUSIVE");
      locker.prepare("INSERT INTO audit_log (at_ms, actor_email, action, target) VALUES (?, 'backup', 'lock', 'test')").run(Date.now());
      // Nothing written or reported yet: the probe finds the lock itself.
      expect(await health()).toMatchObject({ status: "unavailable", database: "not_writable", reason: "locked" });

      const first = nextDelivery("locked");
      const res = await postJson(h.baseUrl, "acme", first.body); // waits out the busy timeout once
      expect(res.status).toBe(503);
      expect(res.headers["retry-after"]).toMatch(/^\d+$/);
      // Then refused at once while paused: the event loop is not held by the lock.
      const refused = [first];
      for (let i = 0; i < 5; i++) {
        const d = nextDelivery("locked");
        const again = await postJson(h.baseUrl, "acme", d.body);
        expect(again.status).toBe(503);
        refused.push(d);
      }
      expect(await health()).toMatchObject({ status: "unavailable", reason: "locked", message: expect.stringMatching(/write lock/) });
      // Reads go on from what is stored.
      expect(storedIds().has(before.id)).toBe(true);
      locker.exec("COMMIT");

      const answers = await resendUntilStored(refused);
      expect(answers.map((a) => a.json?.status)).toEqual(refused.map(() => "stored"));
      for (const d of refused) acked.add(d.id);
      checkInvariants(acked);
      expect(h.db.get<{ n: number }>(sql`SELECT count(*) n FROM audit_log WHERE actor_email = 'backup'`)?.n).toBe(1);
      expect(await health()).toMatchObject({ status: "ok", database: "ok" });
    } finally {
      if (locker.inTransaction) locker.exec("ROLLBACK");
      locker.close();
    }
  });
});

describe("an app's settings that cannot be read", () => {
  it("answers 503 + Retry-After (never a crash or a 500), and takes the delivery once they can be read again", async () => {
    // The apps table gone from under the ingest (as a settings read that fails: unreachable,
    // locked, I/O): "open-app" was never looked up, so no cached settings answer for it.
    h.db.$client.exec("ALTER TABLE apps RENAME TO apps_elsewhere");
    const { body } = nextDelivery("settings");
    let refused: RawResponse;
    try {
      refused = await postJson(h.baseUrl, "open-app", { ...body, appId: "open-app" }, null);
    } finally {
      h.db.$client.exec("ALTER TABLE apps_elsewhere RENAME TO apps");
    }
    expect(refused.status).toBe(503);
    expect(refused.headers["retry-after"]).toBe("1");
    expect(refused.json).toMatchObject({ error: { code: "unavailable" } });

    // A failed read is not cached: the platform's next attempt is taken.
    const again = await postJson(h.baseUrl, "open-app", { ...body, appId: "open-app" }, null);
    expect(again.status).toBe(200);
    expect(again.json).toEqual({ status: "stored" });
  });
});
