/**
 * Benchmark: backfill of one app with N calls of a data mix (platform: ~3 participants
 * each) from the emulator over HTTP into ClickHouse (CLICKHOUSE_URL mode) on a two-shard
 * cluster of local clickhouse-server processes started by the test harness. Reports
 * calls/s end to end, the syncing process's peak RSS, and the CPU of Callboard, the
 * emulator and ClickHouse. The emulator renders its pages as they are asked for (its CPU
 * on the same cores, as a real upstream's would be) unless `prerender` is set.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { ClickHouse } from "@/lib/clickhouse/client";
import type { DataMixName } from "@/lib/emulator/mixes";
import type { BenchRow } from "./bench-row";
import { childCpuSeconds } from "./production-server";
import { spawnBenchEmulator } from "./sync-backfill";

export interface ClickHouseSyncResult {
  calls: number;
  callsPerSecond: number;
  wallMs: number;
  peakRssMb: number;
  participantsPerCall: number;
  insertMs: number;
  parseMs: number;
  syncCpuSeconds: number;
  emulatorCpuSeconds?: number;
  clickhouseCpuSeconds?: number;
  /** ClickHouse CPU from the sync's end until the merges its inserts started have finished (at most 60 s). */
  clickhouseSettleCpuSeconds?: number;
  mainBusy?: number;
}

export interface ClickHouseSyncOptions {
  calls?: number;
  shards?: 1 | 2;
  batchSize?: number;
  mix?: DataMixName;
  /** The emulator renders every page before the sync starts (its CPU then hidden from the figure). */
  prerender?: boolean;
  /** Schema v1's `calls` too (default: the app's WRITE_V1_FACTS); false: schema v2 alone. */
  writeV1Facts?: boolean;
}

export async function measureClickHouseSync({ calls = 1_000_000, shards = 2, batchSize, mix = "platform", prerender = false, writeV1Facts }: ClickHouseSyncOptions = {}): Promise<ClickHouseSyncResult> {
  process.env.AUTH_SECRET ??= "bench-only-secret-bench-only-secret-000";
  process.env.LOG_LEVEL ??= "silent";
  const { startClickHouse } = await import("@/lib/clickhouse/test-clickhouse");
  const ch = await startClickHouse({ shards });
  const emu = await spawnBenchEmulator(calls, { mix, prerender });
  const dir = mkdtempSync(path.join(tmpdir(), "callboard-bench-chsync-"));
  try {
    Object.assign(process.env, ch.env("bench_sync"));
    const { resetEnvForTests } = await import("@/lib/config/env");
    resetEnvForTests();
    const { openDatabase } = await import("@/db/client");
    const { addApp } = await import("@/lib/apps/registry");
    const { syncApp } = await import("@/lib/sync/sync-app");
    const { clickhouse, closeClickHouse, openClickHouse } = await import("@/lib/clickhouse/client");
    const { ensureClickHouseSchema } = await import("@/lib/clickhouse/ensure");
    const { migrateClickHouse } = await import("@/lib/clickhouse/migrate");
    // Migrated here, not only by ensureClickHouseSchema: that runs once per process, and a
    // second mix of the same run has a cluster of its own.
    await migrateClickHouse(ch.config("bench_sync"));
    await ensureClickHouseSchema();
    const db = openDatabase(path.join(dir, "warehouse.db"));
    const info = emu.apps[0];
    const app = await addApp(db, { appId: info.appId, name: "bench", region: info.region, apiKey: info.apiKey, callsUrl: info.callsUrl });
    const chPids = ch.servers.map((s) => serverPid(s.dir)).filter((p): p is number => p !== undefined);
    const chCpu = () => chPids.reduce((sum, pid) => sum + (childCpuSeconds(pid) ?? 0), 0);
    let peak = process.memoryUsage().rss;
    const sample = () => {
      peak = Math.max(peak, process.memoryUsage().rss);
    };
    const sampler = setInterval(sample, 100);
    const cpu0 = process.cpuUsage();
    const emuCpu0 = childCpuSeconds(emu.child.pid);
    const chCpu0 = chCpu();
    let summary;
    try {
      summary = await syncApp(db, app, { trigger: "manual", perPage: 1000, onPage: sample, batchSize, clickHouse: writeV1Facts === undefined ? undefined : { writeV1Facts } });
    } finally {
      clearInterval(sampler);
      sample();
    }
    const cpu = process.cpuUsage(cpu0);
    const emuCpu1 = childCpuSeconds(emu.child.pid);
    const chCpu1 = chCpu();
    if (summary.status !== "succeeded") throw new Error(`bench sync failed: ${summary.error}`);
    // The inserts' parts are merged after them: that CPU is the sync's too, whatever the batch size.
    await mergesSettled(ch.servers.map((s) => openClickHouse({ ...ch.config("bench_sync"), origin: `http://${s.host}:${s.httpPort}` })));
    const chCpu2 = chCpu();
    // From v2 (written in both positions of the switch): its participant rows, signed.
    const [row] = await clickhouse().rows<{ parts: number }>(`SELECT sum(sign) AS parts FROM participants_v2`);
    db.$client.close();
    await closeClickHouse();
    const wallMs = summary.timings.wallMs;
    return {
      calls: summary.fetched,
      callsPerSecond: Math.round(summary.fetched / (wallMs / 1000)),
      wallMs: Math.round(wallMs),
      peakRssMb: Math.round(peak / 1e6),
      participantsPerCall: Number(row?.parts ?? 0) / Math.max(1, summary.fetched),
      insertMs: Math.round(summary.timings.dbMs),
      parseMs: Math.round(summary.timings.parseMs),
      syncCpuSeconds: (cpu.user + cpu.system) / 1e6,
      emulatorCpuSeconds: emuCpu0 === undefined || emuCpu1 === undefined ? undefined : emuCpu1 - emuCpu0,
      clickhouseCpuSeconds: chPids.length ? chCpu1 - chCpu0 : undefined,
      clickhouseSettleCpuSeconds: chPids.length ? chCpu2 - chCpu1 : undefined,
      mainBusy: summary.timings.mainBusy,
    };
  } finally {
    emu.child.kill("SIGTERM");
    await ch.stop();
    rmSync(dir, { recursive: true, force: true });
    // Back to the embedded mode for whatever the run measures next (the SQLite sync of the next mix).
    delete process.env.CLICKHOUSE_URL;
    delete process.env.CLICKHOUSE_CLUSTER;
    (await import("@/lib/config/env")).resetEnvForTests();
  }
}

/** Waits until no shard has a merge running for 2 s in a row (at most 60 s), then closes the shards' clients. */
async function mergesSettled(shards: ClickHouse[]): Promise<void> {
  const until = Date.now() + 60_000;
  let quietSince = Date.now();
  try {
    while (Date.now() < until && Date.now() - quietSince < 2_000) {
      await new Promise((r) => setTimeout(r, 250));
      const counts = await Promise.all(shards.map((c) => c.rows<{ n: number }>("SELECT count() AS n FROM system.merges")));
      if (counts.some(([r]) => Number(r?.n ?? 0) > 0)) quietSince = Date.now();
    }
  } finally {
    await Promise.all(shards.map((c) => c.close()));
  }
}

/** The pid of the clickhouse-server whose config lives in `dir` (from /proc; undefined off Linux). */
export function serverPid(dir: string): number | undefined {
  try {
    for (const p of readdirSync("/proc")) {
      if (!/^\d+$/.test(p)) continue;
      try {
        if (readFileSync(`/proc/${p}/cmdline`, "utf8").includes(path.join(dir, "config.xml"))) return Number(p);
      } catch {
        /* gone */
      }
    }
  } catch {
    /* no /proc */
  }
  return undefined;
}

const per = (s: number | undefined, calls: number) => (s === undefined ? "?" : `${((s * 1e6) / calls).toFixed(0)}`);

/**
 * Per mix, in one run on the same machine: the backfill into SQLite (the embedded
 * default), into ClickHouse writing schema v1 and v2 side by side (WRITE_V1_FACTS on),
 * and into ClickHouse writing v2 alone (the end state). Issue 25's target: ClickHouse at
 * least as many calls/s as SQLite.
 */
export async function runClickHouseSyncBench({ mixes = ["platform"], ...opts }: { calls?: number; mixes?: DataMixName[]; prerender?: boolean } = {}): Promise<BenchRow[]> {
  const { measureSyncBackfill } = await import("./sync-backfill");
  const rows: BenchRow[] = [];
  for (const mix of mixes) {
    const sqlite = await measureSyncBackfill({ calls: opts.calls, mix, prerender: opts.prerender });
    const area = `clickhouse sync (${mix}, upstream ${opts.prerender ? "prerendered" : "rendering its pages"})`;
    rows.push({ area, metric: `sync into SQLite, same run: backfill ${sqlite.calls.toLocaleString("en")} calls over HTTP`, target: "", measured: `${sqlite.callsPerSecond.toLocaleString("en")} calls/s` });
    for (const writeV1Facts of [false, true]) {
      const r = await measureClickHouseSync({ ...opts, mix, writeV1Facts });
      rows.push(...clickHouseSyncRows(mix, opts.prerender === true, r, writeV1Facts ? "v1 and v2" : "v2 alone", sqlite.callsPerSecond));
    }
  }
  return rows;
}

function clickHouseSyncRows(mix: DataMixName, prerender: boolean, r: ClickHouseSyncResult, schemas: string, sqliteCallsPerSecond: number): BenchRow[] {
  const n = r.calls.toLocaleString("en");
  const area = `clickhouse sync (${mix}, upstream ${prerender ? "prerendered" : "rendering its pages"}), writing ${schemas}`;
  return [
    {
      area, metric: `sync into ClickHouse (2 local shards): backfill ${n} calls over HTTP (${r.participantsPerCall.toFixed(2)} participant rows per call)`,
      target: `>= SQLite's ${sqliteCallsPerSecond.toLocaleString("en")} calls/s`, measured: `${r.callsPerSecond.toLocaleString("en")} calls/s (${(r.wallMs / 1000).toFixed(1)} s)`,
      ok: r.callsPerSecond >= sqliteCallsPerSecond,
    },
    { area, metric: "peak RSS of the syncing Callboard process", target: "< 600 MB", measured: `${r.peakRssMb} MB`, ok: r.peakRssMb < 600 },
    { area, metric: "CPU per call: Callboard / emulator / ClickHouse (both shards) during the sync", target: "", measured: `${per(r.syncCpuSeconds, r.calls)} / ${per(r.emulatorCpuSeconds, r.calls)} / ${per(r.clickhouseCpuSeconds, r.calls)} µs` },
    { area, metric: "ClickHouse CPU per call after the sync, until the merges it started are done", target: "", measured: `${per(r.clickhouseSettleCpuSeconds, r.calls)} µs` },
    { area, metric: "sync thread busy; parse / inserts (overlapping)", target: "", measured: `${r.mainBusy === undefined ? "?" : Math.round(r.mainBusy * 100)}%; ${(r.parseMs / 1000).toFixed(1)} s / ${(r.insertMs / 1000).toFixed(1)} s` },
  ];
}
