import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Db, SyncHarness as Harness } from "./test-sync";

process.env.AUTH_SECRET ??= "integration-test-secret-at-least-32-characters";
process.env.LOG_LEVEL ??= "silent";

const { expectIntact, fastClient, getAppById, startSyncHarness, syncApp } = await import("./test-sync");

/**
 * Issue 12, items 1 and 10: upstreams that do not converge (a list that grows as it is
 * paged, the same calls page after page) and answers far larger than any page, served by
 * the emulator over real HTTP. A sync stops them with a clear error that names the app
 * and keeps what it stored.
 */
let h: Harness;
const HUGE = 100_000;

beforeAll(async () => {
  h = await startSyncHarness({
    seed: 13,
    now: 1_780_000_000,
    apps: [
      { appId: "endless", count: 2000 },
      { appId: "busy", count: 1000 },
      { appId: "grows", count: 1000 },
      { appId: "wide", count: 3000 },
      { appId: "huge", count: HUGE },
    ],
    timeoutMs: 120_000,
  });
}, 180_000);
afterEach(async () => {
  await h.emu.admin.setQuirks({ nonConverging: "off", ignorePerPage: 0 });
});
afterAll(async () => {
  await h?.close();
});

const calls = (db: Db, appId: string) => h.warehouse(db, appId).calls;
const storedError = (db: Db, runPk: number | null) => db.$client.prepare("SELECT status, error FROM sync_runs WHERE pk = ?").get(runPk);

describe("an upstream that does not converge (issue 12 item 1)", () => {
  it("stops a list whose total keeps growing, names the app and keeps what it stored", async () => {
    const { db } = h.freshDb();
    await h.register(db, "endless");
    await h.emu.admin.setQuirks({ nonConverging: "growing" });
    // Every page full, total_pages always page + 5: without a bound this never ends.
    const r = await syncApp(db, (await getAppById(db, "endless"))!, { trigger: "test", perPage: 200, client: fastClient });
    expect(r.status).toBe("failed");
    expect(r.error).toMatch(/^sync of app endless stopped: the Calls API does not converge/);
    expect(r.error).toMatch(/grew from 1,200 to [\d,]+ calls/);
    expect(r.error).toMatch(/--allow-growth/);
    // Announced 6 pages (1,200 calls); the bound is 10 pages of slack past that.
    expect(r.pages).toBeLessThanOrEqual(6 + 10);
    expect(calls(db, "endless")).toBe(r.fetched);
    expect(storedError(db, r.runPk)).toMatchObject({ status: "failed", error: r.error });
    expect(db.$client.pragma("integrity_check", { simple: true })).toBe("ok");
  });

  it("stops the same calls served again page after page, even with --allow-growth", async () => {
    const { db } = h.freshDb();
    await h.register(db, "endless");
    await h.emu.admin.setQuirks({ nonConverging: "repeating" });
    for (const allowGrowth of [false, true]) {
      const r = await syncApp(db, (await getAppById(db, "endless"))!, { trigger: "test", perPage: 100, allowGrowth, fromStart: true, client: fastClient });
      expect(r.status).toBe("failed");
      expect(r.error).toMatch(/app endless stopped: the Calls API does not converge \(it served the same calls again on 3 pages in a row\)/);
      expect(r.pages).toBe(6);
      expect(calls(db, "endless")).toBe(300);
    }
  });

  it("bounds what an app may add in one run to what it announced, unless --allow-growth says the growth is real", async () => {
    // 3,000 calls arrive while the backfill pages (before its third page): four times what
    // the first page announced.
    const growingBeforePage3 = (appId: string) => {
      let grown: Promise<unknown> | undefined;
      return async (url: string, init: RequestInit) => {
        if (Number(new URL(url).searchParams.get("page")) >= 3) await (grown ??= h.emu.admin.advance({ appId, seconds: 60, newCalls: 3000 }));
        return fetch(url, init);
      };
    };
    const { db } = h.freshDb();
    await h.register(db, "busy");
    const stopped = await syncApp(db, (await getAppById(db, "busy"))!, { trigger: "test", perPage: 100, prefetch: 0, client: { ...fastClient, fetch: growingBeforePage3("busy") } });
    expect(stopped.status).toBe("failed");
    expect(stopped.error).toMatch(/app busy stopped: .*grew from 1,000 to 4,000 calls.*--allow-growth/);
    expect(calls(db, "busy")).toBe(stopped.fetched);

    // The same backfill with the override runs to the end; the next run brings what
    // arrived at the top meanwhile, and the warehouse is exactly the platform's.
    const { db: real } = h.freshDb();
    await h.register(real, "grows");
    const allowed = await syncApp(real, (await getAppById(real, "grows"))!, { trigger: "test", perPage: 100, prefetch: 0, allowGrowth: true, client: { ...fastClient, fetch: growingBeforePage3("grows") } });
    expect(allowed.error).toBeNull();
    expect(allowed.fetched).toBeGreaterThan(3000);
    expect((await syncApp(real, (await getAppById(real, "grows"))!, { trigger: "test", client: fastClient })).status).toBe("succeeded");
    const t = await h.truth("grows");
    expect(t.calls).toBe(4000);
    h.expectSame(real, "grows", t);
  });
});

describe("a huge page (issue 12 item 10)", () => {
  it("refuses an answer of 100,000 records (over 32 MB) without reading it whole, and keeps what was stored", async () => {
    const { db } = h.freshDb();
    await h.register(db, "huge");
    // A first run stores the newest 2,000 calls (then the upstream answers 503).
    await h.emu.admin.setFaults({ rules: [{ kind: "503", route: "list", afterN: 2 }] });
    await syncApp(db, (await getAppById(db, "huge"))!, { trigger: "test", perPage: 1000, prefetch: 0, client: { ...fastClient, maxAttempts: 1 } });
    await h.emu.admin.clearFaults();
    const before = calls(db, "huge");
    expect(before).toBe(2000);
    // Now the server ignores perPage and answers the whole list in one page.
    await h.emu.admin.setQuirks({ ignorePerPage: HUGE });
    let peak = 0;
    const base = process.memoryUsage().rss;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss - base)), 20);
    const r = await syncApp(db, (await getAppById(db, "huge"))!, { trigger: "test", fromStart: true, client: { ...fastClient, timeoutMs: 60_000 } }).finally(() => clearInterval(sampler));
    expect(r.status).toBe("failed");
    expect(r.error).toMatch(/^Calls API of app huge: page 1 is (more than 32|\d+) MB, over the limit of 32 MB for one answer; refused/);
    // Nothing like the answer's ~150 MB (and the gigabyte its parse would take) was held.
    expect(peak).toBeLessThan(150 * 2 ** 20);
    expect(calls(db, "huge")).toBe(before);
    expect(db.$client.pragma("integrity_check", { simple: true })).toBe("ok");
  }, 120_000);

  it("refuses a page of more calls than the platform ever serves, and keeps what was stored", async () => {
    const t = await h.truth("wide");
    const { db } = h.freshDb();
    await h.register(db, "wide");
    expect((await syncApp(db, (await getAppById(db, "wide"))!, { trigger: "test", client: fastClient })).status).toBe("succeeded");
    await h.emu.admin.setQuirks({ ignorePerPage: 3000 });
    const r = await syncApp(db, (await getAppById(db, "wide"))!, { trigger: "test", full: true, client: fastClient });
    expect(r.status).toBe("failed");
    expect(r.error).toMatch(/^Calls API of app wide: page 1 holds 3,000 calls, more than the platform's maximum of 1,000 a page/);
    h.expectSame(db, "wide", t);
    expectIntact(db, "wide", t);
  });
});
