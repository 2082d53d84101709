import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

process.env.AUTH_SECRET ??= "unit-test-secret-at-least-32-characters-long";
process.env.LOG_LEVEL ??= "silent";

const { openDatabase } = await import("@/db/client");
const { apps, syncRuns } = await import("@/db/schema");
const { addApp } = await import("@/lib/apps/registry");
const { eq } = await import("drizzle-orm");
const { startSyncScheduler } = await import("./scheduler");
const { syncAll } = await import("./sync-app");

const dirs: string[] = [];
const freshDb = () => {
  const dir = mkdtempSync(path.join(tmpdir(), "callboard-sched-"));
  dirs.push(dir);
  return openDatabase(path.join(dir, "w.db"));
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("sync scheduler", () => {
  it("runs syncAll on the interval, one run at a time, until stopped", async () => {
    const runs: number[] = [];
    const s = startSyncScheduler(freshDb(), { intervalSeconds: 0.03, firstRunAfterMs: 0, onRun: (r) => runs.push(r.length) });
    await new Promise((r) => setTimeout(r, 200));
    await s.stop();
    const seen = runs.length;
    expect(seen).toBeGreaterThanOrEqual(2);
    await new Promise((r) => setTimeout(r, 100));
    expect(runs.length).toBe(seen);
  });

  it("is off with an interval of 0", async () => {
    const runs: number[] = [];
    const s = startSyncScheduler(freshDb(), { intervalSeconds: 0, firstRunAfterMs: 0, onRun: (r) => runs.push(r.length) });
    await new Promise((r) => setTimeout(r, 80));
    await s.stop();
    expect(runs).toEqual([]);
  });

  it("leaves alone an app synced within half an interval (another server's schedule just did it), and syncs the others", async () => {
    const db = freshDb();
    // Nothing listens on port 9: a sync of these apps fails at its first request, which shows it was tried.
    for (const appId of ["fresh", "stale", "never"]) {
      await addApp(db, { appId, name: appId, region: "us", apiKey: `key-${appId}-0001`, callsUrl: "http://127.0.0.1:9/v3" });
    }
    await db.update(apps).set({ lastSuccessfulSyncMs: Date.now() - 10_000 }).where(eq(apps.appId, "fresh"));
    await db.update(apps).set({ lastSuccessfulSyncMs: Date.now() - 40_000 }).where(eq(apps.appId, "stale"));
    const results = await syncAll(db, { trigger: "test", skipSyncedWithinMs: 30_000, client: { maxAttempts: 1, timeoutMs: 1_000 } });
    expect(results.map((r) => [r.appId, r.status]).sort()).toEqual([["never", "failed"], ["stale", "failed"]]);
    const ran = await db.select({ appPk: syncRuns.appPk }).from(syncRuns);
    expect(ran).toHaveLength(2);

    // The schedule passes half its interval: at 60 s, an app synced 10 s ago is not tried.
    const only = freshDb();
    await addApp(only, { appId: "fresh", name: "fresh", region: "us", apiKey: "key-fresh-0001", callsUrl: "http://127.0.0.1:9/v3" });
    await only.update(apps).set({ lastSuccessfulSyncMs: Date.now() - 10_000 });
    const runs: string[][] = [];
    const s = startSyncScheduler(only, { intervalSeconds: 60, firstRunAfterMs: 0, onRun: (r) => runs.push(r.map((x) => x.appId)) });
    await expect.poll(() => runs.length, { timeout: 10_000 }).toBe(1);
    await s.stop();
    expect(runs).toEqual([[]]);
    expect(await only.select().from(syncRuns)).toEqual([]);
  });
});
