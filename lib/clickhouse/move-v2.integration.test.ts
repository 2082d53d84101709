import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDbFile } from "@/lib/analytics/test-fixtures";
import { openClickHouse, type ClickHouse } from "./client";
import { forHost } from "./config";
import { applyMigrations, migrateClickHouse } from "./migrate";
import { MOVE_CHECKPOINTS_TABLE, moveServersToV2, moveToV2, type MoveProgress } from "./move-v2";
import { V2_TABLES } from "./schema-v2";
import { CLICKHOUSE_SKIP_REASON, startClickHouse, type TestClickHouse } from "./test-clickhouse";
import { CallWriterV2, openShardsV2 } from "./writer-v2";
import { openChdb } from "./test-chdb";
import { answers, history } from "./test-move-v2-history";

/**
 * Migration 0005 and the move of a v1 warehouse to schema v2 (move-v2.ts) on two real
 * 18.16 shards: every shard gets the v2 tables and views; the move writes each call's live
 * state once (versions collapsed, tombstones out, starts moved across months followed),
 * its participants and uid codes, fills the pre-aggregates, checks counts per month, and
 * ends exactly right after a crash between any two steps and after a SIGKILL of
 * `npm run db:migrate` half way, when run again. On chdb too (the SQL on a current server).
 */

const DB = "callboard_move_test";

async function expectMovedExactly(ch: ClickHouse): Promise<void> {
  const a = await answers(ch, DB);
  expect(a.v1.byMonth.length).toBeGreaterThan(40);
  expect(a.v2).toEqual(a.v1);
  expect(a.monthly).toEqual(a.v1);
}

describe.skipIf(CLICKHOUSE_SKIP_REASON)("migration 0005 and the move to v2 on two 18.16 shards", () => {
  let cluster: TestClickHouse;
  let ch: ClickHouse;
  const shards: ClickHouse[] = [];

  beforeAll(async () => {
    cluster = await startClickHouse({ shards: 2 });
    ch = openClickHouse(cluster.config(DB));
    for (const s of cluster.servers) shards.push(openClickHouse(forHost(cluster.config(DB), s.host)));
  }, 120_000);
  afterAll(async () => {
    for (const s of shards) await s.close();
    await ch?.close();
    await cluster?.stop();
  }, 120_000); // two shards stopping on a loaded box

  it("creates the v2 tables and their views on every shard, with a Distributed table in front of each", async () => {
    const report = await migrateClickHouse(cluster.config(DB));
    expect(report.applied.filter((a) => a.id === 5)).toHaveLength(2);
    for (const s of shards) {
      const tables = new Map((await s.rows<{ name: string; engine: string }>(`SELECT name, engine FROM system.tables WHERE database = '${DB}'`)).map((r) => [r.name, r.engine]));
      for (const table of V2_TABLES) {
        expect(tables.get(`${table.name}_local`), table.name).toMatch(/MergeTree$/);
        expect(tables.get(table.name), table.name).toBe("Distributed");
      }
      for (const view of ["calls_by_bucket_mv", "calls_by_month_mv", "participants_by_month_mv", "concurrency_by_quarter_mv"]) expect(tables.get(`${view}_local`)).toBe("MaterializedView");
      expect(tables.get(MOVE_CHECKPOINTS_TABLE)).toBe("MergeTree");
    }
  });

  it("has nothing to move in a warehouse without v1 calls", async () => {
    const report = await moveToV2(cluster.config(DB));
    expect(report).toEqual({ hosts: expect.any(Array), moved: [], skipped: 0 });
    expect(report.hosts).toHaveLength(2);
  });

  it("moves every live call once, resumes after a crash between any two steps, and rewrites a half-written month whole", { timeout: 300_000 }, async () => {
    const rows = history();
    for (let i = 0; i < rows.length; i += 250) await ch.insert("calls", rows.slice(i, i + 250));
    // Crashes: after a month's partitions were dropped, then after it was written (not yet checked).
    for (const crashAt of ["dropped", "written"] as const) {
      let seen = 0;
      const crash = (p: MoveProgress) => {
        if (p.step === crashAt && ++seen === 3) throw new Error(`crash at ${crashAt}`);
      };
      await expect(moveToV2(cluster.config(DB), { onProgress: crash })).rejects.toThrow(`crash at ${crashAt}`);
    }
    const before = await Promise.all(shards.map(async (s) => (await s.rows<{ n: number }>(`SELECT count() AS n FROM ${DB}.${MOVE_CHECKPOINTS_TABLE}`))[0].n));
    expect(before).toEqual([4, 4]); // two months checkpointed by each crashed run, on every shard
    const progress: MoveProgress[] = [];
    const report = await moveToV2(cluster.config(DB), { onProgress: (p) => progress.push(p) });
    expect(report.skipped).toBe(4);
    expect(report.moved.length).toBeGreaterThan(15); // months of the whole warehouse (every shard's at once)
    expect(progress.at(-1)).toMatchObject({ step: "checked" });
    expect(progress.at(-1)!.monthsDone).toBe(progress.at(-1)!.monthsTotal);
    await expectMovedExactly(ch);
    // Both shards hold v2 rows (each moved its own), and a run after the end moves nothing.
    for (const s of shards) expect((await s.rows<{ n: number }>(`SELECT count() AS n FROM ${DB}.calls_v2_local`))[0].n).toBeGreaterThan(100);
    expect((await moveToV2(cluster.config(DB))).moved).toEqual([]);
  });

  it("leaves each moved call where the writers find it: a change of one writes the cancel rows of its moved state", { timeout: 120_000 }, async () => {
    const writerShards = await openShardsV2(ch, cluster.config(DB));
    try {
      const writer = new CallWriterV2(ch, writerShards);
      const sessionId = "s-3"; // app 1, one version, never deleted (history)
      const stored = (await writer.lookup(1, [sessionId])).get(sessionId);
      expect(stored?.state?.participants.length).toBeGreaterThan(1);
      const next = { ...stored!.state!, durationSeconds: 999, status: "rejected" };
      const result = await writer.write(1, [{ sessionId, version: stored!.version + 10, next, raw: null }]);
      expect(result).toMatchObject({ written: 1, completed: 0 });
      const code = `cityHash64('${sessionId}')`;
      expect(await ch.rows(`SELECT sum(sign) AS calls, sum(sign * duration_seconds) AS seconds, sumIf(sign, status = 'rejected') AS rejected FROM ${DB}.calls_v2 WHERE app_pk = 1 AND session_id = '${sessionId}'`))
        .toEqual([{ calls: 1, seconds: 999, rejected: 1 }]);
      expect(await ch.rows(`SELECT sum(sign) AS rows FROM ${DB}.participants_v2 WHERE app_pk = 1 AND session_code = ${code}`)).toEqual([{ rows: next.participants.length }]);
      // The cancel row of the moved state carries its version: 2 rows of it, summing to 0.
      expect(await ch.rows(`SELECT count() AS n, sum(sign) AS s FROM ${DB}.calls_v2 WHERE app_pk = 1 AND session_id = '${sessionId}' AND version = ${stored!.version}`)).toEqual([{ n: 2, s: 0 }]);
    } finally {
      await Promise.all(writerShards.filter((x) => x.client !== ch).map((x) => x.client.close()));
    }
  });

  // The killed run's last INSERT … SELECT goes on on the server: the next run kills and waits
  // it out before it drops that month again (stopEarlierMoves), and waits for the killed
  // run's lease to lapse (move-v2-guards.ts).
  it("ends exactly right when npm run db:migrate is SIGKILLed half way through the move and run again", { timeout: 300_000 }, async () => {
    const db = "callboard_move_kill";
    const config = cluster.config(db);
    await migrateClickHouse(config);
    const target = openClickHouse(config);
    const rows = history();
    for (let i = 0; i < rows.length; i += 250) await target.insert("calls", rows.slice(i, i + 250));
    const envOf = { ...process.env, ...cluster.env(db), DATABASE_PATH: tempDbFile("move-kill"), AUTH_SECRET: "move-kill-secret-at-least-32-characters!" };
    // The migrate process itself, not tsx's CLI: that one runs the script in a child of its
    // own, which a SIGKILL of the CLI leaves running (a second mover beside the next run).
    const run = () => spawn(process.execPath, ["--import", "tsx", "scripts/migrate.ts", "--no-progress"], { env: envOf, stdio: ["ignore", "pipe", "pipe"] });
    const first = run();
    let out = "";
    first.stdout.on("data", (d: Buffer) => (out += d.toString()));
    // Killed once a few months are moved (each month logs a line when checked).
    await new Promise<void>((resolve, reject) => {
      first.stdout.on("data", () => {
        if ((out.match(/^Moved /gm) ?? []).length >= 3) {
          first.kill("SIGKILL");
          resolve();
        }
      });
      first.once("exit", () => reject(new Error(`the move ended before it was killed:\n${out}`)));
    });
    await new Promise((r) => first.once("exit", r));
    expect(out).not.toContain("Schema v2: moved");
    const second = run();
    let out2 = "";
    second.stdout.on("data", (d: Buffer) => (out2 += d.toString()));
    const code = await new Promise((r) => second.once("exit", r));
    expect(code, out2).toBe(0);
    expect(out2).toMatch(/Schema v2: moved \d+ months, \d+ calls, every count checked \(\d+ months moved earlier\)/);
    const a = await answers(target, db);
    expect(a.v1.byMonth.length).toBeGreaterThan(40);
    expect(a.v2).toEqual(a.v1);
    expect(a.monthly).toEqual(a.v1);
    await target.close();
  });
});

describe("the move to v2 on chdb (a current ClickHouse)", () => {
  it("moves the same history exactly", { timeout: 120_000 }, async () => {
    const ch = openChdb(DB);
    try {
      await applyMigrations(ch, ch.placement);
      await ch.insert("calls", history());
      const report = await moveServersToV2([ch], ch.placement, "chdb");
      expect(report.moved.length).toBeGreaterThan(15);
      await expectMovedExactly(ch);
      expect((await moveServersToV2([ch], ch.placement, "chdb")).moved).toEqual([]);
    } finally {
      await ch.close();
    }
  });
});
