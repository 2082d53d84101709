import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import type { AppRow } from "@/db/schema";
import { freshState, seedApp, STATE_DIALECTS, useTestEnv } from "@/lib/auth/test-support";
import { getAppById } from "@/lib/apps/registry";
import { logger } from "@/lib/log/logger";
import { newOwnerId } from "../locks/sync-lock";
import { beginRun, finishRun, keepSyncLease, saveRunProgress } from "./run-record";
import { findResumePoint } from "./resume";
import { getSyncRuns } from "./runs";
import type { SyncSummary } from "./summary";

/**
 * A sync run's bookkeeping and its lease, on both stores of the state, through two
 * handles on one store: two Callboard servers (two connections to one SQLite file, or
 * two pools on one real Postgres). Decision 0035 §5 step 4.
 */

const silent = logger.child({});
silent.level = "silent";

const newSummary = (): SyncSummary => ({ kind: "full", status: "failed", error: null, skippedRecords: [] }) as unknown as SyncSummary;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ALREADY_RUNNING = (appId: string, holder: string) =>
  new RegExp(`^a sync of app ${appId} is already running \\(holder ${holder.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}, since \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\)$`);

const progress = (committedPage: number) => ({
  pages: committedPage, fetched: committedPage * 100, inserted: committedPage * 100, updated: 0, unchanged: 0, skipped: 0, refreshed: 0,
  perPage: 100, committedPage, announcedTotal: 1_000,
});

describe.each(STATE_DIALECTS)("sync runs and their lease on %s, two servers", (dialect) => {
  let state: Awaited<ReturnType<typeof freshState>>;
  let serverA: Db;
  let serverB: Db;
  let apps = 0;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    useTestEnv({ LOG_LEVEL: "silent" });
    state = await freshState(dialect);
    serverA = state.db;
    serverB = state.connect();
  });
  afterEach(() => {
    for (const c of children.splice(0)) c.kill("SIGKILL");
  });
  afterAll(async () => {
    await state?.dispose();
  });

  const newApp = async (): Promise<AppRow> => {
    const appId = `app-${dialect}-${++apps}`;
    await seedApp(serverA, appId);
    return (await getAppById(serverA, appId))!;
  };

  it("two syncs of one app at once: exactly one runs, the other is told who holds it, every time", async () => {
    for (let round = 0; round < 10; round++) {
      const app = await newApp();
      const owners = [newOwnerId(), newOwnerId(), newOwnerId(), newOwnerId()];
      const summaries = owners.map(newSummary);
      const handles = [serverA, serverB, serverA, serverB];
      const started = await Promise.all(owners.map((owner, i) => beginRun(handles[i]!, app, owner, 30_000, { trigger: "test" }, summaries[i]!, Date.now())));
      const winners = started.flatMap((s, i) => (s ? [i] : []));
      expect(winners).toHaveLength(1);
      const winner = winners[0]!;
      for (const [i, s] of summaries.entries()) {
        if (i === winner) continue;
        expect(s.status).toBe("already_running");
        expect(s.error).toMatch(ALREADY_RUNNING(app.appId, owners[winner]!));
      }
      // One run row, running, seen alike from both servers.
      for (const handle of [serverA, serverB]) {
        const runs = await getSyncRuns(handle, [app.pk]);
        expect(runs.map((r) => [r.id, r.status])).toEqual([[started[winner]!.runPk, "running"]]);
      }
      // Finished, the lease is free at once for the other server.
      summaries[winner]!.status = "succeeded";
      await finishRun(handles[winner]!, app, owners[winner]!, started[winner]!.runPk, summaries[winner]!, { perPage: 1000, committedPage: null, announcedTotal: null }, silent);
      const next = await beginRun(handles[(winner + 1) % 4]!, app, newOwnerId(), 30_000, { trigger: "test" }, newSummary(), Date.now());
      expect(next).not.toBeNull();
    }
  });

  it("a holder that stops renewing: refused while its lease lasts, then another server takes over and resumes from its stored cursor", async () => {
    const app = await newApp();
    const ownerA = newOwnerId();
    const leaseMs = 1_500;
    const runA = await beginRun(serverA, app, ownerA, leaseMs, { trigger: "test", perPage: 100 }, newSummary(), Date.now());
    expect(runA).toEqual({ runPk: expect.any(Number), resume: null });
    await saveRunProgress(serverA, runA!.runPk, progress(7));

    // A renews for a while: B is refused past a whole lease.
    const keeper = keepSyncLease(serverA, app.pk, ownerA, leaseMs, () => undefined, silent);
    await sleep(leaseMs * 2);
    const refused = newSummary();
    expect(await beginRun(serverB, app, newOwnerId(), leaseMs, { trigger: "test" }, refused, Date.now())).toBeNull();
    expect(refused.error).toMatch(ALREADY_RUNNING(app.appId, ownerA));

    // A freezes (stops renewing, never finishes): its lease runs out and B takes over.
    keeper.stop();
    await sleep(leaseMs + 300);
    const runB = await beginRun(serverB, app, newOwnerId(), 30_000, { trigger: "test" }, newSummary(), Date.now());
    expect(runB).toEqual({ runPk: expect.any(Number), resume: { fromRun: runA!.runPk, page: 8, perPage: 100 } });
    const runs = await getSyncRuns(serverA, [app.pk]);
    expect(runs.find((r) => r.id === runA!.runPk)).toMatchObject({ status: "failed", error: expect.stringMatching(/^interrupted/), inserted: 700 });
    expect(runs.find((r) => r.id === runB!.runPk)).toMatchObject({ status: "running", startPage: 8, resumedFromRun: runA!.runPk });

    // A wakes up and renews: it learns the app is someone else's and stops.
    let lost = false;
    const late = keepSyncLease(serverA, app.pk, ownerA, leaseMs, () => (lost = true), silent);
    await sleep(leaseMs);
    late.stop();
    expect(lost).toBe(true);
  });

  it("a sync process SIGKILLed mid-run leaves a lease that lapses; the other server then resumes from the cursor it stored", async () => {
    const app = await newApp();
    const leaseMs = 3_000;
    const child = spawn(process.execPath, ["--import", "tsx", "lib/sync/test-run-holder.ts"], {
      env: { ...process.env, STATE: state.location, APP_ID: app.appId, LEASE_MS: String(leaseMs), COMMITTED_PAGE: "4", LOG_LEVEL: "silent" },
      stdio: ["ignore", "pipe", "inherit"],
    });
    children.push(child);
    const [first] = (await once(child.stdout!, "data")) as [Buffer];
    const childRun = Number(/^running (\d+)\n$/.exec(first.toString())?.[1]);
    expect(childRun).toBeGreaterThan(0);

    // While it lives it renews: refused after a whole lease.
    await sleep(leaseMs + 300);
    expect(await beginRun(serverB, app, newOwnerId(), 30_000, { trigger: "test" }, newSummary(), Date.now())).toBeNull();

    child.kill("SIGKILL");
    await once(child, "exit");
    const killedAt = Date.now();
    let taken: Awaited<ReturnType<typeof beginRun>> = null;
    let attempts = 0;
    while (!taken && Date.now() - killedAt < leaseMs * 4) {
      attempts++;
      taken = await beginRun(serverB, app, newOwnerId(), 30_000, { trigger: "test" }, newSummary(), Date.now());
      if (!taken) await sleep(100);
    }
    expect(taken).toEqual({ runPk: expect.any(Number), resume: { fromRun: childRun, page: 5, perPage: 100 } });
    if (dialect === "postgres") {
      // Another machine's pid cannot be checked: only the lease's end frees the app.
      expect(attempts).toBeGreaterThan(1);
    } else {
      // On one machine the SQLite lock sees its holder's pid is gone: taken at the first attempt.
      expect(attempts).toBe(1);
    }
    const [killedRun] = (await getSyncRuns(serverB, [app.pk])).filter((r) => r.id === childRun);
    expect(killedRun).toMatchObject({ status: "failed", error: expect.stringMatching(/^interrupted/) });
  });

  it("the resume point is the newest run's cursor, read alike by both servers", async () => {
    const app = await newApp();
    expect(await findResumePoint(serverB, app.pk)).toBeNull();
    const owner = newOwnerId();
    const run = await beginRun(serverA, app, owner, 30_000, { trigger: "test", perPage: 100 }, newSummary(), Date.now());
    await saveRunProgress(serverA, run!.runPk, progress(3));
    // A run that failed with a cursor is resumed after its committed page; one that succeeded is not.
    const failed = newSummary();
    await finishRun(serverA, app, owner, run!.runPk, failed, { perPage: 100, committedPage: 3, announcedTotal: 1_000 }, silent);
    expect(await findResumePoint(serverB, app.pk)).toEqual({ fromRun: run!.runPk, page: 4, perPage: 100 });
    const owner2 = newOwnerId();
    const run2 = await beginRun(serverB, app, owner2, 30_000, { trigger: "test" }, newSummary(), Date.now());
    await finishRun(serverB, app, owner2, run2!.runPk, { ...newSummary(), status: "succeeded" }, { perPage: 100, committedPage: 10, announcedTotal: 1_000 }, silent);
    expect(await findResumePoint(serverA, app.pk)).toBeNull();
  });
});
