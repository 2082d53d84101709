import { spawn } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import { desc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLICKHOUSE_SKIP_REASON } from "@/lib/clickhouse/test-clickhouse";
import { POSTGRES_SKIP_REASON } from "@/lib/postgres/test-postgres";

process.env.AUTH_SECRET ??= "integration-test-secret-at-least-32-characters";
process.env.LOG_LEVEL ??= "silent";

const { addApp, getAppById } = await import("@/lib/apps/registry");
const { freshState } = await import("@/lib/auth/test-support");
const { resetEnvForTests } = await import("@/lib/config/env");
const { clickhouse, closeClickHouse } = await import("@/lib/clickhouse/client");
const { migrateClickHouse } = await import("@/lib/clickhouse/migrate");
const { startClickHouse } = await import("@/lib/clickhouse/test-clickhouse");
const { spawnEmulator } = await import("@/lib/emulator/test-emulator");
const { getSyncRuns } = await import("./runs");
const { tablesOf } = await import("@/db/state");
const { syncApp } = await import("./sync-app");
type State = Awaited<ReturnType<typeof freshState>>;

/**
 * Two Callboard servers syncing over one Postgres (their state: apps, runs, the lease)
 * and one two-shard ClickHouse cluster (the calls), with the emulator upstream over real
 * HTTP (issue 26: "two servers asked to sync the same app at once: one sync runs; a
 * server killed while syncing: the other takes over after the lease and converges
 * exactly"). Each "server" is a pool of its own; the killed one is a process.
 */
const ALPHA = 1200;
const BETA = 900;
const fastClient = { timeoutMs: 2_000, maxAttempts: 10, baseBackoffMs: 20, maxBackoffMs: 200, maxRetryAfterMs: 1_000 };
const v2Only = { clickHouse: { writeV1Facts: false } };

describe.skipIf(CLICKHOUSE_SKIP_REASON || POSTGRES_SKIP_REASON)("two servers syncing over one Postgres and ClickHouse", { timeout: 180_000 }, () => {
  let emu: Awaited<ReturnType<typeof spawnEmulator>>;
  let ch: Awaited<ReturnType<typeof startClickHouse>>;
  let state: State;
  let chEnv: Record<string, string>;

  beforeAll(async () => {
    [emu, ch, state] = await Promise.all([
      spawnEmulator({ seed: 31, now: 1_780_000_000, apps: [{ appId: "alpha", count: ALPHA }, { appId: "beta", count: BETA }] }),
      startClickHouse({ shards: 2 }),
      freshState("postgres"),
    ]);
    chEnv = ch.env("pg_sync_test");
    Object.assign(process.env, chEnv);
    resetEnvForTests();
    await closeClickHouse();
    await migrateClickHouse(ch.config("pg_sync_test"));
  });
  afterAll(async () => {
    await closeClickHouse();
    await emu?.stop();
    await ch?.stop();
    await state?.dispose();
    delete process.env.CLICKHOUSE_URL;
    delete process.env.CLICKHOUSE_CLUSTER;
    resetEnvForTests();
  }, 300_000);

  const register = async (appId: string) => {
    const info = emu.apps.find((a) => a.appId === appId)!;
    return await addApp(state.db, { appId, name: appId, region: info.region, apiKey: info.apiKey, callsUrl: info.callsUrl });
  };

  /** The emulator's truth for an app against what reports read in ClickHouse v2 (signed sums, no FINAL). */
  async function expectExactly(appId: string, appPk: number): Promise<void> {
    const truth = await emu.admin.truth(appId);
    const participants = truth.reduce((n, c) => n + ((c.participants as unknown[] | undefined) ?? []).length, 0);
    const [r] = await clickhouse().rows<Record<string, number>>(
      `SELECT sum(sign) AS calls, (SELECT sum(sign) FROM participants_v2 WHERE app_pk = ${appPk}) AS participants,
         (SELECT countIf(n NOT IN (0, 1)) FROM (SELECT sum(sign) AS n FROM calls_v2 WHERE app_pk = ${appPk} GROUP BY session_id)) AS miscounted
       FROM calls_v2 WHERE app_pk = ${appPk}`,
    );
    expect({ calls: Number(r!.calls), participants: Number(r!.participants), miscounted: Number(r!.miscounted) }).toEqual({
      calls: truth.length,
      participants,
      miscounted: 0,
    });
  }

  /** The committed page the app's newest run recorded, null when none yet. */
  async function findResumeCursor(appPk: number): Promise<number | null> {
    const { syncRuns } = tablesOf(state.db);
    const [run] = await state.db.select({ committedPage: syncRuns.committedPage }).from(syncRuns).where(eq(syncRuns.appPk, appPk)).orderBy(desc(syncRuns.pk)).limit(1);
    return run?.committedPage !== null && run?.committedPage !== undefined && run.committedPage >= 1 ? run.committedPage : null;
  }

  it("two servers asked to sync the same app at once: one sync runs, the other says it is already running", async () => {
    const app = await register("alpha");
    const serverA = state.db;
    const serverB = state.connect();
    const [a, b] = await Promise.all([
      syncApp(serverA, (await getAppById(serverA, "alpha"))!, { trigger: "test", perPage: 200, client: fastClient, ...v2Only }),
      syncApp(serverB, (await getAppById(serverB, "alpha"))!, { trigger: "test", perPage: 200, client: fastClient, ...v2Only }),
    ]);
    expect([a.status, b.status].sort()).toEqual(["already_running", "succeeded"]);
    const refused = [a, b].find((r) => r.status === "already_running")!;
    expect(refused.error).toMatch(/^a sync of app alpha is already running \(holder .+, since .+\)$/);
    expect([a, b].find((r) => r.status === "succeeded")).toMatchObject({ inserted: ALPHA, error: null });
    await expectExactly("alpha", app.pk);
    // Both servers show the one run; the app's last success is seen by both.
    for (const server of [serverA, serverB]) {
      expect((await getSyncRuns(server, [app.pk])).map((r) => [r.status, r.inserted])).toEqual([["succeeded", ALPHA]]);
      expect((await getAppById(server, "alpha"))!.backfillCompletedMs).not.toBeNull();
    }
  });

  it("a server SIGKILLed while syncing: the other is refused until the lease lapses, then resumes from its cursor and converges exactly", async () => {
    const app = await register("beta");
    const leaseMs = 5_000;
    // The sync process is killed once its run row in Postgres holds a cursor (the progress
    // write is asynchronous, after each ClickHouse commit), as a machine losing power would.
    const child = spawn(process.execPath, ["--import", "tsx", path.join(import.meta.dirname, "test-sync-child.ts")], {
      env: { ...process.env, ...chEnv, STATE_URL: state.location, APP_ID: "beta", PAGE_DELAY_MS: "150", WRITE_V1_FACTS: "0", LEASE_MS: String(leaseMs) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    const exited = once(child, "exit");
    let cursorPage: number | null = null;
    while (cursorPage === null && child.exitCode === null) {
      cursorPage = await findResumeCursor(app.pk);
      if (cursorPage === null) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    child.kill("SIGKILL");
    await exited;
    const killedAt = Date.now();
    expect(out).not.toMatch(/done/);
    expect(cursorPage).toBeGreaterThanOrEqual(1);
    const serverB = state.connect();

    // The killed server's lease still runs: no second sync of the app yet.
    const early = await syncApp(serverB, (await getAppById(serverB, "beta"))!, { trigger: "test", client: fastClient, ...v2Only });
    expect(early.status).toBe("already_running");

    let r = early;
    while (r.status === "already_running" && Date.now() - killedAt < leaseMs * 5) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      r = await syncApp(serverB, (await getAppById(serverB, "beta"))!, { trigger: "test", client: fastClient, ...v2Only });
    }
    expect(r.error).toBeNull();
    expect(r.status).toBe("succeeded");
    // It went on after the killed run's cursor (what it had committed to ClickHouse and recorded in Postgres).
    // (Or after a later one: the child may have recorded more between the read and the kill.)
    expect(r.resumedFromPage).toBeGreaterThan(cursorPage!);
    await expectExactly("beta", app.pk);

    const runs = await getSyncRuns(state.db, [app.pk]);
    expect(runs.map((x) => x.status)).toEqual(["succeeded", "failed"]);
    expect(runs[1]!.error).toMatch(/^interrupted/);
    expect(runs[0]!.resumedFromRun).toBe(runs[1]!.id);
    const again = await syncApp(state.db, (await getAppById(state.db, "beta"))!, { trigger: "test", full: true, client: fastClient, ...v2Only });
    expect(again).toMatchObject({ status: "succeeded", inserted: 0, updated: 0, unchanged: BETA });
  });
});
