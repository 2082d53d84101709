import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db, SyncHarness as Harness } from "./test-sync";

process.env.AUTH_SECRET ??= "integration-test-secret-at-least-32-characters";
process.env.LOG_LEVEL ??= "silent";

const { expectIntact, fastClient, getAppById, openDatabase, startSyncHarness, syncApp } = await import("./test-sync");

/**
 * Issue 12, items 8 and 9 (the sync's side): a warehouse that fills up, or that another
 * process keeps locked past the busy timeout, during a backfill over real HTTP. The sync
 * fails with words that say so and name the app, nothing already stored is lost or
 * damaged, and the next run, once there is room or the lock is gone, resumes and
 * converges without any repair.
 */
let h: Harness;

beforeAll(async () => {
  h = await startSyncHarness({ seed: 17, now: 1_780_000_000, apps: [{ appId: "full", count: 3000 }, { appId: "locked", count: 2000 }] });
});
afterAll(async () => {
  await h?.close();
});

const runs = (db: Db) => db.$client.prepare("SELECT status, error FROM sync_runs ORDER BY pk").all() as Array<{ status: string; error: string | null }>;

/** The warehouse's size limit, as SQLite counts it: in pages (per connection; the write worker takes the sync's). */
function limitGrowth(db: Db, bytes: number): void {
  const used = db.$client.pragma("page_count", { simple: true }) as number;
  const pageSize = db.$client.pragma("page_size", { simple: true }) as number;
  db.$client.pragma(`max_page_count = ${used + Math.ceil(bytes / pageSize)}`);
}

async function expectRecovered(db: Db, appId: string, failedRun: number): Promise<void> {
  const t = await h.truth(appId);
  const again = await syncApp(db, (await getAppById(db, appId))!, { trigger: "test", client: fastClient });
  expect(again.error).toBeNull();
  expect(again.status).toBe("succeeded");
  expect(again.resumedFromPage).toBeGreaterThan(1);
  h.expectSame(db, appId, t);
  expectIntact(db, appId, t);
  expect(runs(db)[failedRun - 1].status).toBe("failed");
}

describe("a full disk (issue 12 item 8)", () => {
  it("fails the sync clearly, keeps everything stored intact, and the next run resumes once there is room", async () => {
    const { db } = h.freshDb();
    await h.register(db, "full");
    limitGrowth(db, 2_000_000); // room for a third of the app's calls
    const r = await syncApp(db, (await getAppById(db, "full"))!, { trigger: "test", perPage: 200, batchSize: 200, client: fastClient });
    expect(r.status).toBe("failed");
    expect(r.error).toMatch(/^sync of app full failed: the warehouse's disk is full \(SQLITE_FULL: database or disk is full\); free space, then sync again\. The calls stored before are kept\. The next run resumes at page \d+\.$/);
    const stored = h.warehouse(db, "full").calls;
    expect(stored).toBeGreaterThan(0);
    expect(stored).toBeLessThan(3000);
    expectIntact(db, "full", await h.truth("full"));
    expect(runs(db)[0]).toMatchObject({ status: "failed", error: r.error });

    db.$client.pragma("max_page_count = 4294967294"); // space freed
    await expectRecovered(db, "full", 1);
  });

  it("on a real filesystem that fills up (a small tmpfs), where even the run's own bookkeeping cannot be written", async (ctx) => {
    const dir = mkdtempSync(path.join(tmpdir(), "callboard-tmpfs-"));
    const mnt = path.join(dir, "disk");
    mkdirSync(mnt);
    try {
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=3m", "tmpfs", mnt], { stdio: "ignore" });
    } catch {
      rmSync(dir, { recursive: true, force: true });
      ctx.skip(); // needs the right to mount a filesystem (root in a container)
    }
    let db: Db | undefined;
    try {
      db = openDatabase(path.join(mnt, "warehouse.db"));
      await h.register(db, "full");
      const r = await syncApp(db, (await getAppById(db, "full"))!, { trigger: "test", perPage: 200, batchSize: 200, client: fastClient });
      expect(r.status).toBe("failed");
      expect(r.error).toMatch(/^sync of app full failed: the warehouse's disk is full \(SQLITE_FULL/);
      expect(h.warehouse(db, "full").calls).toBeGreaterThan(0);
      expectIntact(db, "full", await h.truth("full"));

      execFileSync("mount", ["-o", "remount,size=64m", mnt]); // space freed
      await expectRecovered(db, "full", 1);
    } finally {
      db?.$client.close();
      execFileSync("umount", [mnt]);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** Another process with the write lock (a long sqlite3 session, a backup tool). */
function lockHolder(file: string) {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, ["--import", "tsx", path.join(import.meta.dirname, "../locks/test-lock-holder.ts")], {
    cwd: process.cwd(),
    env: { ...process.env, DB_FILE: file },
  });
  let out = "";
  const waiting: Array<{ word: string; resolve: () => void }> = [];
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
    for (const w of waiting.splice(0)) {
      if (out.includes(w.word)) w.resolve();
      else waiting.push(w);
    }
  });
  const send = (cmd: "lock" | "release", word: string) =>
    new Promise<void>((resolve) => {
      out = "";
      waiting.push({ word, resolve });
      child.stdin.write(`${cmd}\n`);
    });
  return {
    lock: () => send("lock", "locked"),
    release: () => send("release", "released"),
    stop: () => new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : (child.once("exit", () => resolve()), child.stdin.end()))),
  };
}

describe("a warehouse locked by another process past the busy timeout (issue 12 item 9)", () => {
  it("refuses to start clearly, fails a running backfill clearly, and recovers when the lock goes", async () => {
    const { db, file } = h.freshDb();
    await h.register(db, "locked");
    db.$client.pragma("busy_timeout = 300"); // the write worker waits as long as this connection
    const holder = lockHolder(file);
    try {
      await holder.lock();
      const refused = await syncApp(db, (await getAppById(db, "locked"))!, { trigger: "test", client: fastClient });
      expect(refused).toMatchObject({ status: "failed", runPk: null });
      expect(refused.error).toMatch(/^sync of app locked could not start: the warehouse stayed locked by another connection for longer than the busy timeout \(SQLITE_BUSY: database is locked\)/);
      await holder.release();

      // The lock is taken again before the fourth page: the backfill cannot write on. It is
      // taken once the run's row records two committed pages: the write worker records
      // progress after each commit, in its own transaction, and on a loaded machine it can
      // lag the fetches by a page or two; a lock taken before any progress is recorded
      // leaves nothing to resume from (the next run starts over, which also converges).
      let held: Promise<void> | undefined;
      const committedPage = () => (db.$client.prepare("SELECT max(committed_page) FROM sync_runs").pluck().get() as number | null) ?? 0;
      const lockBeforePage4 = async (url: string, init: RequestInit) => {
        if (Number(new URL(url).searchParams.get("page")) >= 4) {
          for (let waited = 0; committedPage() < 2 && waited < 20_000; waited += 20) await new Promise((r) => setTimeout(r, 20));
          await (held ??= holder.lock());
        }
        return fetch(url, init);
      };
      const r = await syncApp(db, (await getAppById(db, "locked"))!, { trigger: "test", perPage: 200, batchSize: 200, prefetch: 0, client: { ...fastClient, fetch: lockBeforePage4 } });
      expect(r.status).toBe("failed");
      expect(r.error).toMatch(/^sync of app locked failed: the warehouse stayed locked by another connection for longer than the busy timeout \(SQLITE_BUSY: database is locked\); sync again once that writer .* is done\. The calls stored before are kept\. The next run resumes at page \d+\.$/);
      await holder.release();
      expect(h.warehouse(db, "locked").calls).toBeGreaterThanOrEqual(2 * 200);
      expectIntact(db, "locked", await h.truth("locked"));
      // Its final row could not be written under the lock: the next run closes it as interrupted.
      await expectRecovered(db, "locked", 1);
      expect(runs(db)[0].error).toMatch(/interrupted/);
    } finally {
      await holder.stop();
    }
  });
});
