import { spawn } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SyncHarness as Harness } from "./test-sync";

process.env.AUTH_SECRET ??= "integration-test-secret-at-least-32-characters";
process.env.LOG_LEVEL ??= "silent";

const { fastClient, getAppById, startSyncHarness, syncApp, syncAll } = await import("./test-sync");

/**
 * Integration over real HTTP: the real client and sync against the emulator, a separate
 * process on loopback. The expected warehouse is the emulator's own truth.
 */
const SEED = 11;
const ALPHA = 2400;
const BETA = 300;
let h: Harness;
let emu: Harness["emu"];
const truth = (appId: string) => h.truth(appId);
const warehouse: Harness["warehouse"] = (db, appId) => h.warehouse(db, appId);
const expectSame: Harness["expectSame"] = (db, appId, t) => h.expectSame(db, appId, t);
const freshDb = () => h.freshDb();
const register: Harness["register"] = (db, appId, apiKey) => h.register(db, appId, apiKey);

beforeAll(async () => {
  h = await startSyncHarness({ seed: SEED, now: 1_780_000_000, apps: [{ appId: "alpha", count: ALPHA }, { appId: "beta", count: BETA }] });
  emu = h.emu;
});
afterAll(async () => {
  await h?.close();
});

describe("sync against the emulator", () => {
  it("ends with exactly the emulator's calls, participants and minutes despite faults; a second run changes nothing", async () => {
    const t = await truth("alpha");
    expect(t.calls).toBe(ALPHA);
    const { db } = freshDb();
    await register(db, "alpha");
    await emu.admin.setFaults({
      seed: 3,
      rules: [
        { kind: "429", route: "list", everyNth: 7, times: 2 },
        { kind: "500", route: "list", everyNth: 5, times: 3 },
        { kind: "truncate", route: "list", everyNth: 4, times: 2 },
        { kind: "hang", route: "list", everyNth: 9, times: 1 },
        { kind: "reset", route: "list", everyNth: 11, times: 1 },
      ],
    });
    try {
      const r = await syncApp(db, (await getAppById(db, "alpha"))!, { trigger: "test", perPage: 200, client: fastClient });
      expect(r.error).toBeNull();
      expect(r.status).toBe("succeeded");
      expect(r.inserted).toBe(ALPHA);
      expect(Object.values((await emu.admin.faults()).fired).reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(5);
    } finally {
      await emu.admin.clearFaults();
    }
    expectSame(db, "alpha", t);
    // The same uid twice in one call (rejoin, second device) is kept as two rows.
    expect(t.repeatedUidCalls.length).toBeGreaterThan(0);
    {
      const id = t.repeatedUidCalls[0];
      const rows = db.$client
        .prepare("SELECT count(*) - count(DISTINCT uid) FROM call_participants p JOIN calls c ON c.pk = p.call_pk WHERE c.session_id = ?")
        .pluck()
        .get(id) as number;
      expect(rows).toBeGreaterThan(0);
    }
    const again = await syncApp(db, (await getAppById(db, "alpha"))!, { trigger: "test", full: true, perPage: 500, client: fastClient });
    expect(again).toMatchObject({ status: "succeeded", inserted: 0, updated: 0, unchanged: ALPHA, kind: "full" });
    const incremental = await syncApp(db, (await getAppById(db, "alpha"))!, { trigger: "test", perPage: 500, client: fastClient });
    expect(incremental).toMatchObject({ status: "succeeded", kind: "incremental", inserted: 0, updated: 0, stoppedEarly: true });
    expect(incremental.pages).toBeLessThan(ALPHA / 500);
    const runs = db.$client.prepare("SELECT status FROM sync_runs ORDER BY pk").pluck().all();
    expect(runs).toEqual(["succeeded", "succeeded", "succeeded"]);
  });

  it("gets everything when the server ignores perPage", async () => {
    const t = await truth("beta");
    const { db } = freshDb();
    await register(db, "beta");
    await emu.admin.setQuirks({ ignorePerPage: 25 });
    try {
      const r = await syncApp(db, (await getAppById(db, "beta"))!, { trigger: "test", perPage: 1000, client: fastClient });
      expect(r.status).toBe("succeeded");
      expect(r.pages).toBe(Math.ceil(BETA / 25));
    } finally {
      await emu.admin.setQuirks({ ignorePerPage: 0 });
    }
    expectSame(db, "beta", t);
  });

  it("skips unparseable records and reports them with reasons", async () => {
    const { db } = freshDb();
    await register(db, "beta");
    await emu.admin.setQuirks({ invalidRecords: true });
    try {
      const r = await syncApp(db, (await getAppById(db, "beta"))!, { trigger: "test", perPage: 100, client: fastClient });
      expect(r.status).toBe("succeeded");
      expect(r.skipped).toBeGreaterThan(0);
      expect(r.inserted + r.skipped).toBe(r.fetched);
      const stored = db.$client.prepare("SELECT skipped, skipped_records FROM sync_runs WHERE pk = ?").get(r.runPk) as { skipped: number; skipped_records: string };
      expect(stored.skipped).toBe(r.skipped);
      const reasons = JSON.parse(stored.skipped_records) as Array<{ sessionId: string | null; reason: string }>;
      expect(reasons.length).toBe(Math.min(100, r.skipped));
      expect(reasons.map((x) => x.reason).join("\n")).toMatch(/sessionId: missing|type: expected a string|participants: expected an array/);
    } finally {
      await emu.admin.setQuirks({ invalidRecords: false });
    }
  });

  it("fails an app with a bad API key with a clear message, and syncs the others", async () => {
    const { db } = freshDb();
    await register(db, "alpha", "definitely-not-the-key");
    await register(db, "beta");
    const results = await syncAll(db, { trigger: "test", client: fastClient });
    const alpha = results.find((r) => r.appId === "alpha")!;
    const beta = results.find((r) => r.appId === "beta")!;
    expect(alpha.status).toBe("failed");
    expect(alpha.error).toMatch(/app alpha/);
    expect(alpha.error).toMatch(/HTTP 401/);
    expect(alpha.error).not.toContain("definitely-not-the-key");
    expect(beta.status).toBe("succeeded");
    expect(warehouse(db, "beta").calls).toBe(BETA);
    const run = db.$client.prepare("SELECT status, error FROM sync_runs WHERE pk = ?").get(alpha.runPk) as { status: string; error: string };
    expect(run.status).toBe("failed");
    expect(run.error).toMatch(/app alpha/);
  });

  it("lets only one of two concurrent syncs of an app run", async () => {
    const { db } = freshDb();
    await register(db, "beta");
    const app = (await getAppById(db, "beta"))!;
    const [a, b] = await Promise.all([
      syncApp(db, app, { trigger: "test", client: fastClient }),
      syncApp(db, app, { trigger: "test", client: fastClient }),
    ]);
    const statuses = [a.status, b.status].sort();
    expect(statuses).toEqual(["already_running", "succeeded"]);
    expect([a, b].find((r) => r.status === "already_running")!.error).toMatch(/already running/);
  });

  it("refreshes ongoing calls until they end", async () => {
    const { db } = freshDb();
    await register(db, "alpha");
    await syncApp(db, (await getAppById(db, "alpha"))!, { trigger: "test", client: fastClient });
    const before = warehouse(db, "alpha").ongoing;
    expect(before).toBeGreaterThan(0);
    await emu.admin.advance({ appId: "alpha", seconds: 7200, endOngoing: true });
    const t = await truth("alpha");
    expect(t.ongoing).toBe(0);
    const r = await syncApp(db, (await getAppById(db, "alpha"))!, { trigger: "test", client: fastClient });
    expect(r.status).toBe("succeeded");
    expect(warehouse(db, "alpha").ongoing).toBe(0);
    // Either the list brought the ended version (it is newest) or the refresh did.
    expect(r.updated + r.refreshed).toBeGreaterThanOrEqual(before);
    expectSame(db, "alpha", t);
  });

  it("converges after a sync process is SIGKILLed mid-way", async () => {
    const t = await truth("beta");
    const { db, file } = freshDb();
    await register(db, "beta");
    const child = spawn(process.execPath, ["--import", "tsx", path.join(import.meta.dirname, "test-sync-child.ts")], {
      cwd: process.cwd(),
      env: { ...process.env, DB_FILE: file, APP_ID: "beta", PAGE_DELAY_MS: "60" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`child never reached page 2: ${out} ${err}`)), 20_000);
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString();
        if (/page 2\n/.test(out)) {
          clearTimeout(timer);
          child.kill("SIGKILL");
          resolve();
        }
      });
    });
    await exited;
    expect(out).not.toMatch(/done/);
    const partial = warehouse(db, "beta").calls;
    expect(partial).toBeLessThan(BETA);
    const r = await syncApp(db, (await getAppById(db, "beta"))!, { trigger: "test", client: fastClient });
    expect(r.status).toBe("succeeded");
    expectSame(db, "beta", t);
    const runs = db.$client.prepare("SELECT status, error FROM sync_runs ORDER BY pk").all() as Array<{ status: string; error: string | null }>;
    expect(runs[0]).toMatchObject({ status: "failed" });
    expect(runs[0].error).toMatch(/interrupted/);
    expect(runs[1].status).toBe("succeeded");
    // And once more: nothing changes.
    const again = await syncApp(db, (await getAppById(db, "beta"))!, { trigger: "test", full: true, client: fastClient });
    expect(again).toMatchObject({ inserted: 0, updated: 0, unchanged: BETA });
  });
});
