import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Db, SyncHarness as Harness } from "./test-sync";

process.env.AUTH_SECRET ??= "integration-test-secret-at-least-32-characters";
process.env.LOG_LEVEL ??= "silent";

const { expectIntact, fastClient, getAppById, startSyncHarness, syncApp } = await import("./test-sync");
const { getSyncRuns } = await import("./runs");

/**
 * Issue 18: a backfill that fails part-way continues from the page after the last one
 * it committed, and converges exactly (never a call twice), even when new calls arrive at
 * the top of the list between the two runs.
 */
let h: Harness;
const CALLS = 4000;
const PER_PAGE = 250;
// No retries worth the name: a page the emulator fails stops the run.
const client = { ...fastClient, timeoutMs: 5_000, maxAttempts: 2 };

beforeAll(async () => {
  h = await startSyncHarness({ seed: 7, now: 1_780_000_000, apps: [{ appId: "big", count: CALLS }, { appId: "mixed", count: 1200 }, { appId: "sized", count: 1200 }] });
});
afterEach(async () => {
  await h.emu.admin.clearFaults();
  await h.emu.admin.setQuirks({ order: "newest", ignorePerPage: 0 });
});
afterAll(async () => {
  await h?.close();
});

interface RunRow {
  status: string;
  error: string | null;
  per_page: number;
  start_page: number;
  committed_page: number | null;
  resumed_from_run: number | null;
}
const runRow = (db: Db, pk: number | null) =>
  db.$client.prepare("SELECT status, error, per_page, start_page, committed_page, resumed_from_run FROM sync_runs WHERE pk = ?").get(pk) as RunRow;

/** The page numbers the emulator was asked for, in order. */
async function listedPages(): Promise<number[]> {
  return (await h.emu.admin.requests())
    .filter((r) => r.route === "list")
    .map((r) => Number(new URL(r.path, "http://x").searchParams.get("page")));
}

describe("resuming a failed backfill (issue 18)", () => {
  it("continues after the last committed page, picks up calls that arrived in between, and converges exactly", async () => {
    const { db } = h.freshDb();
    await h.register(db, "big");
    // The upstream goes down after six requests (pages 1-6, unless one was retried).
    await h.emu.admin.setFaults({ rules: [{ kind: "503", route: "list", afterN: 6 }] });
    // Two pages read ahead (not SYNC_CONCURRENCY): the failure then falls after page 4 at the earliest.
    const first = await syncApp(db, (await getAppById(db, "big"))!, { trigger: "test", perPage: PER_PAGE, batchSize: 2 * PER_PAGE, prefetch: 2, client });
    expect(first.status).toBe("failed");
    const handled = first.pages;
    expect(handled).toBeGreaterThanOrEqual(3);
    expect(first.error).toMatch(/app big/);
    // Everything fetched before the failure is committed, and the run says where the next one goes on.
    expect(first.error).toContain(`resumes at page ${handled + 1}.`);
    expect(runRow(db, first.runPk)).toMatchObject({ status: "failed", per_page: PER_PAGE, start_page: 1, committed_page: handled });
    expect(h.warehouse(db, "big").calls).toBe(handled * PER_PAGE);

    // Calls arrive at the top while the sync is down: everything shifts down the list.
    await h.emu.admin.advance({ appId: "big", seconds: 900, newCalls: 300 });
    await h.emu.admin.clearFaults();
    await h.emu.admin.clearRequests();
    const t = await h.truth("big");
    expect(t.calls).toBe(CALLS + 300);

    const second = await syncApp(db, (await getAppById(db, "big"))!, { trigger: "test", client });
    expect(second.error).toBeNull();
    expect(second).toMatchObject({ status: "succeeded", kind: "full", resumedFromPage: handled + 1 });
    expect(runRow(db, second.runPk)).toMatchObject({ status: "succeeded", per_page: PER_PAGE, start_page: handled + 1, resumed_from_run: first.runPk });
    // What the Sync page and GET /api/v1/sync show of it.
    expect((await getSyncRuns(db, [(await getAppById(db, "big"))!.pk], { limit: 1 }))[0]).toMatchObject({ id: second.runPk, startPage: handled + 1, resumedFromRun: first.runPk });
    const pages = await listedPages();
    // The tail from there to the end, then the head from page 1 until known calls.
    expect(pages[0]).toBe(handled + 1);
    expect(pages.indexOf(1)).toBeGreaterThan(0);
    expect(pages.filter((p) => p <= handled).length).toBeLessThan(handled);
    h.expectSame(db, "big", t);
    expectIntact(db, "big", t);

    const again = await syncApp(db, (await getAppById(db, "big"))!, { trigger: "test", full: true, perPage: 1000, client });
    expect(again).toMatchObject({ status: "succeeded", inserted: 0, updated: 0, unchanged: t.calls, resumedFromPage: null });
  });

  it("starts over when asked to (fromStart), and when the failed run's pages did not come newest first", async () => {
    const { db } = h.freshDb();
    await h.register(db, "mixed");
    const fail = async (order: "newest" | "shuffled") => {
      await h.emu.admin.setQuirks({ order });
      await h.emu.admin.setFaults({ rules: [{ kind: "503", route: "list", afterN: 2 }] });
      const r = await syncApp(db, (await getAppById(db, "mixed"))!, { trigger: "test", perPage: 200, batchSize: 200, client });
      expect(r.status).toBe("failed");
      await h.emu.admin.clearFaults();
      await h.emu.admin.clearRequests();
      return r;
    };
    expect(runRow(db, (await fail("newest")).runPk).committed_page).toBe(2);
    const restarted = await syncApp(db, (await getAppById(db, "mixed"))!, { trigger: "test", fromStart: true, client });
    expect(restarted).toMatchObject({ status: "succeeded", resumedFromPage: null });
    expect((await listedPages())[0]).toBe(1);

    const { db: other } = h.freshDb();
    await h.register(other, "mixed");
    await h.emu.admin.setQuirks({ order: "shuffled" });
    await h.emu.admin.setFaults({ rules: [{ kind: "503", route: "list", afterN: 2 }] });
    const shuffled = await syncApp(other, (await getAppById(other, "mixed"))!, { trigger: "test", perPage: 200, batchSize: 200, client });
    expect(shuffled.status).toBe("failed");
    // Pages out of order: a page number is no cursor, the run keeps none.
    expect(runRow(other, shuffled.runPk).committed_page).toBeNull();
    expect(shuffled.error).not.toMatch(/resumes/);
    await h.emu.admin.clearFaults();
    await h.emu.admin.clearRequests();
    const next = await syncApp(other, (await getAppById(other, "mixed"))!, { trigger: "test", client });
    expect(next).toMatchObject({ status: "succeeded", resumedFromPage: null });
    expect((await listedPages())[0]).toBe(1);
    const t = await h.truth("mixed");
    h.expectSame(other, "mixed", t);
  });

  it("counts the cursor in the page size the platform served, and trusts no cursor served in another size", async () => {
    const t = await h.truth("sized");
    // A server that ignores perPage serves pages of 25; the run fails after ten of them.
    const failAfterTenPages = async (db: Db) => {
      await h.emu.admin.setQuirks({ ignorePerPage: 25 });
      await h.emu.admin.setFaults({ rules: [{ kind: "503", route: "list", afterN: 10 }] });
      const r = await syncApp(db, (await getAppById(db, "sized"))!, { trigger: "test", perPage: 200, batchSize: 25, prefetch: 0, client });
      expect(r.status).toBe("failed");
      expect(runRow(db, r.runPk)).toMatchObject({ per_page: 25, committed_page: 10 });
      expect(h.warehouse(db, "sized").calls).toBe(250);
      await h.emu.admin.clearFaults();
    };

    // It now honours perPage: the resumed run asks for pages of 25 and misses nothing.
    const { db } = h.freshDb();
    await h.register(db, "sized");
    await failAfterTenPages(db);
    await h.emu.admin.setQuirks({ ignorePerPage: 0 });
    const resumed = await syncApp(db, (await getAppById(db, "sized"))!, { trigger: "test", client });
    expect(resumed).toMatchObject({ status: "succeeded", resumedFromPage: 11 });
    h.expectSame(db, "sized", t);

    // It now serves pages of 100 whatever is asked: page 11 is no longer where the cursor
    // points, so the resumed run walks the head whole and still misses nothing.
    const { db: other } = h.freshDb();
    await h.register(other, "sized");
    await failAfterTenPages(other);
    await h.emu.admin.setQuirks({ ignorePerPage: 100 });
    const moved = await syncApp(other, (await getAppById(other, "sized"))!, { trigger: "test", client });
    expect(moved).toMatchObject({ status: "succeeded", resumedFromPage: 11 });
    expect(runRow(other, moved.runPk).committed_page).toBeNull();
    h.expectSame(other, "sized", t);
  });
});
