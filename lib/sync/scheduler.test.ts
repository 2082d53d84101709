import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

process.env.AUTH_SECRET ??= "unit-test-secret-at-least-32-characters-long";
process.env.LOG_LEVEL ??= "silent";

const { openDatabase } = await import("@/db/client");
const { startSyncScheduler } = await import("./scheduler");

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
});
