/**
 * Benchmark: backfill of one app with N calls (~3 participants each) from the emulator,
 * over HTTP on loopback, into a fresh warehouse. Reports calls/s end to end, peak RSS of
 * this process, and where the time goes (waiting for pages, parsing, the write
 * transactions alone).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Db } from "@/db/client";
import type { AppRow } from "@/db/schema";
import type { syncApp as SyncAppFn } from "@/lib/sync/sync-app";
import type { BenchRow } from "./run";

export interface SyncBackfillResult {
  calls: number;
  callsPerSecond: number;
  peakRssMb: number;
  wallMs: number;
  /** The write transactions alone. */
  dbOnlyMs: number;
  /** Time the sync loop waited for pages (what pipelining did not hide). */
  fetchWaitMs: number;
  /** Sum of the page requests' own durations (they overlap with parsing and writing). */
  fetchMs: number;
  /** Validation, raw JSON, hashing, classification. */
  parseMs: number;
  pages: number;
  emulatorStartMs: number;
  dbFileMb: number;
  participantsPerCall: number;
  /** Busy share of the sync's thread and of its write worker (event-loop utilisation). */
  mainBusy?: number;
  writerBusy?: number;
  /** CPU of this process (main thread and write worker) during the sync. */
  syncCpuSeconds: number;
  /** CPU of the emulator process during the sync (it shares the machine's cores). */
  emulatorCpuSeconds?: number;
}

interface Spawned {
  child: ChildProcess;
  apps: Array<{ appId: string; apiKey: string; region: "us" | "eu" | "in"; callsUrl: string }>;
}

/**
 * The issue asks for calls with "about 3 participants each". The emulator's default mix
 * (meetings of up to 12 members and 3 no-shows) averages 4.7 participant rows per call;
 * meetings of at most 4 bring it to 2.9 (the run prints the measured figure).
 */
const BENCH_MAX_MEETING_SIZE = 4;

async function spawnBenchEmulator(calls: number, maxMeetingSize: number, prerender: boolean): Promise<Spawned> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "scripts/emulator.ts", "--port", "0", "--seed", "1", "--apps", `bench:${calls}`, "--now", "1780000000", "--max-meeting-size", String(maxMeetingSize), ...(prerender ? ["--prerender"] : [])],
    { cwd: process.cwd(), stdio: ["ignore", "pipe", "inherit"] },
  );
  return await new Promise<Spawned>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error("emulator did not start within 180 s")), 180_000);
    child.once("exit", (code) => reject(new Error(`emulator exited with ${code}`)));
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf("\n");
      if (nl < 0) return;
      clearTimeout(timer);
      resolve({ child, apps: (JSON.parse(out.slice(0, nl)) as Pick<Spawned, "apps">).apps });
    });
  });
}

export interface SyncBackfillOptions {
  calls?: number;
  /** Where the write transactions run (default: the sync's own choice). */
  writer?: "auto" | "inline" | "worker";
  batchSize?: number;
  /** Emulator meeting size cap (default BENCH_MAX_MEETING_SIZE; 12 is the emulator's own mix). */
  maxMeetingSize?: number;
  /** Emulator serves pre-rendered records (default true: its CPU stays off the measured cores). */
  prerender?: boolean;
}

interface BenchBackfill {
  db: Db;
  app: AppRow;
  file: string;
  emu: Spawned;
  emulatorStartMs: number;
  syncApp: typeof SyncAppFn;
}

/** An emulator serving `calls` calls of one app, a fresh warehouse with the app registered; both removed after `run`. */
async function withBenchBackfill<T>(o: { calls: number; maxMeetingSize: number; prerender: boolean }, run: (b: BenchBackfill) => Promise<T>): Promise<T> {
  process.env.AUTH_SECRET ??= "bench-only-secret-bench-only-secret-000";
  process.env.LOG_LEVEL ??= "silent";
  const { openDatabase } = await import("@/db/client");
  const { addApp } = await import("@/lib/apps/registry");
  const { syncApp } = await import("@/lib/sync/sync-app");

  const t0 = performance.now();
  const emu = await spawnBenchEmulator(o.calls, o.maxMeetingSize, o.prerender);
  const emulatorStartMs = performance.now() - t0;
  const dir = mkdtempSync(path.join(tmpdir(), "callboard-bench-sync-"));
  const file = path.join(dir, "warehouse.db");
  try {
    const db = openDatabase(file);
    const info = emu.apps[0];
    const app = addApp(db, { appId: info.appId, name: "bench", region: info.region, apiKey: info.apiKey, callsUrl: info.callsUrl });
    return await run({ db, app, file, emu, emulatorStartMs, syncApp });
  } finally {
    emu.child.kill("SIGTERM");
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function measureSyncBackfill({ calls = 1_000_000, writer, batchSize, maxMeetingSize = BENCH_MAX_MEETING_SIZE, prerender = true }: SyncBackfillOptions = {}): Promise<SyncBackfillResult> {
  return withBenchBackfill({ calls, maxMeetingSize, prerender }, async ({ db, app, emu, emulatorStartMs, syncApp }) => {
    // Diagnosis only: measure the sync without other parts' write triggers.
    if (process.env.BENCH_SYNC_DROP_TRIGGERS === "1") {
      for (const t of db.$client.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger'").pluck().all() as string[]) {
        db.$client.exec(`DROP TRIGGER "${t}"`);
      }
    }
    let peak = process.memoryUsage().rss;
    const sample = () => {
      peak = Math.max(peak, process.memoryUsage().rss);
    };
    const sampler = setInterval(sample, 100);
    let summary;
    const cpu0 = process.cpuUsage();
    const emuCpu0 = childCpuSeconds(emu.child.pid);
    try {
      // The event loop is busy inside write transactions: sample after each page as well.
      summary = await syncApp(db, app, { trigger: "manual", perPage: 1000, onPage: sample, writer, batchSize });
    } finally {
      clearInterval(sampler);
      sample();
    }
    const cpu = process.cpuUsage(cpu0);
    const syncCpuSeconds = (cpu.user + cpu.system) / 1e6;
    const emuCpu1 = childCpuSeconds(emu.child.pid);
    const emulatorCpuSeconds = emuCpu0 === undefined || emuCpu1 === undefined ? undefined : emuCpu1 - emuCpu0;
    if (summary.status !== "succeeded") throw new Error(`bench sync failed: ${summary.error}`);
    db.$client.pragma("wal_checkpoint(TRUNCATE)");
    const participantRows = db.$client.prepare("SELECT count(*) FROM call_participants").pluck().get() as number;
    const dbFileMb = (db.$client.prepare("SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()").pluck().get() as number) / 1e6;
    db.$client.close();
    const wallMs = summary.timings.wallMs;
    return {
      calls: summary.fetched,
      callsPerSecond: Math.round(summary.fetched / (wallMs / 1000)),
      peakRssMb: Math.round(peak / 1e6),
      wallMs: Math.round(wallMs),
      dbOnlyMs: Math.round(summary.timings.dbMs),
      fetchWaitMs: Math.round(summary.timings.fetchWaitMs),
      fetchMs: Math.round(summary.timings.fetchMs),
      parseMs: Math.round(summary.timings.parseMs),
      pages: summary.pages,
      emulatorStartMs: Math.round(emulatorStartMs),
      dbFileMb: Math.round(dbFileMb),
      participantsPerCall: participantRows / Math.max(1, summary.fetched),
      syncCpuSeconds,
      emulatorCpuSeconds,
      mainBusy: summary.timings.mainBusy,
      writerBusy: summary.timings.writerBusy,
    };
  });
}

const pct = (x: number | undefined) => (x === undefined ? "?" : `${Math.round(x * 100)}%`);

/** CPU seconds (user + system) a child process has used so far; undefined off Linux. */
function childCpuSeconds(pid: number | undefined): number | undefined {
  try {
    // /proc/PID/stat: fields 14 and 15 (utime, stime) in clock ticks, after the ")" of the name.
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/** Rows for `npm run bench` (bench/run.ts prints them). */
export async function runSyncBackfillBench(opts: { calls?: number } = {}): Promise<BenchRow[]> {
  const r = await measureSyncBackfill(opts);
  const n = r.calls.toLocaleString("en");
  return [
    { area: "sync", metric: `backfill ${n} calls over HTTP (${r.participantsPerCall.toFixed(2)} participant rows per call), end to end`, target: ">= 30,000 calls/s", measured: `${r.callsPerSecond.toLocaleString("en")} calls/s (${(r.wallMs / 1000).toFixed(1)} s)`, ok: r.callsPerSecond >= 30_000 },
    { area: "sync", metric: "peak RSS of the syncing process", target: "< 600 MB", measured: `${r.peakRssMb} MB`, ok: r.peakRssMb < 600 },
    { area: "sync", metric: "write transactions alone", target: "", measured: `${(r.dbOnlyMs / 1000).toFixed(1)} s (${Math.round(r.calls / (r.dbOnlyMs / 1000)).toLocaleString("en")} calls/s)` },
    { area: "sync", metric: "parse + hash + classify", target: "", measured: `${(r.parseMs / 1000).toFixed(1)} s` },
    { area: "sync", metric: "CPU during the sync: Callboard (both threads) / emulator", target: "", measured: `${r.syncCpuSeconds.toFixed(1)} s / ${r.emulatorCpuSeconds?.toFixed(1) ?? "?"} s (${((r.syncCpuSeconds * 1e6) / r.calls).toFixed(0)} / ${r.emulatorCpuSeconds === undefined ? "?" : ((r.emulatorCpuSeconds * 1e6) / r.calls).toFixed(0)} µs per call)` },
    { area: "sync", metric: "busy: sync thread / write worker", target: "", measured: `${pct(r.mainBusy)} / ${pct(r.writerBusy)}` },
    { area: "sync", metric: "waiting for pages (not hidden by prefetch)", target: "", measured: `${(r.fetchWaitMs / 1000).toFixed(1)} s of ${r.pages} pages` },
  ];
}

/** Where the long backfill reports: rate and memory at each of these (and at the end). */
export const LONG_BACKFILL_MARKS = [1_000_000, 5_000_000, 10_000_000];

export interface LongBackfillMark {
  calls: number;
  seconds: number;
  /** From the start of the sync to this mark. */
  callsPerSecond: number;
  /** Since the previous mark: a rate that falls as the warehouse grows shows here. */
  recentCallsPerSecond: number;
  /** Peak RSS of this process (sync thread and write worker) up to the mark. */
  peakRssMb: number;
  warehouseMb: number;
  walMb: number;
}

export interface LongBackfillResult {
  status: string;
  error: string | null;
  marks: LongBackfillMark[];
  emulatorStartMs: number;
}

/**
 * Issue 18: one backfill long enough to show what a short one does not (a 10M backfill
 * failed at 1.39M with "database is locked"). The emulator generates records as it serves
 * them: pre-rendering 10M records would take it about 14 GB. The lease is the production
 * one, renewed every 15 s by the sync thread while the worker writes.
 */
export async function measureLongBackfill({ calls = 10_000_000, maxMeetingSize = BENCH_MAX_MEETING_SIZE, prerender = false } = {}): Promise<LongBackfillResult> {
  return withBenchBackfill({ calls, maxMeetingSize, prerender }, async ({ db, app, file, emulatorStartMs, syncApp }) => {
    const marks: LongBackfillMark[] = [];
    const wanted = [...LONG_BACKFILL_MARKS.filter((m) => m < calls), calls];
    let peak = process.memoryUsage().rss;
    const sample = () => (peak = Math.max(peak, process.memoryUsage().rss));
    const sampler = setInterval(sample, 100);
    const started = performance.now();
    const mark = (fetched: number) => {
      const seconds = (performance.now() - started) / 1000;
      const prev = marks.at(-1);
      marks.push({
        calls: fetched,
        seconds,
        callsPerSecond: fetched / seconds,
        recentCallsPerSecond: (fetched - (prev?.calls ?? 0)) / (seconds - (prev?.seconds ?? 0)),
        peakRssMb: peak / 1e6,
        warehouseMb: fileMb(file),
        walMb: fileMb(`${file}-wal`),
      });
      // A long run reports as it goes, so that a failure late in it still leaves figures.
      const m = marks.at(-1)!;
      process.stderr.write(`sync-long: ${m.calls.toLocaleString("en")} calls at ${m.seconds.toFixed(0)} s, ${Math.round(m.callsPerSecond)} calls/s (${Math.round(m.recentCallsPerSecond)} since the last mark), peak RSS ${Math.round(m.peakRssMb)} MB\n`);
    };
    let summary;
    try {
      summary = await syncApp(db, app, {
        trigger: "manual",
        perPage: 1000,
        onPage: ({ fetched }) => {
          sample();
          if (fetched >= wanted[marks.length]!) mark(fetched);
        },
      });
    } finally {
      clearInterval(sampler);
    }
    if (summary.status === "succeeded" && marks.at(-1)?.calls !== summary.fetched) mark(summary.fetched);
    db.$client.close();
    return { status: summary.status, error: summary.error, marks, emulatorStartMs };
  });
}

function fileMb(file: string): number {
  try {
    return statSync(file).size / 1e6;
  } catch {
    return 0;
  }
}

/** Rows for `npm run bench -- --only sync-long [--calls N]`. */
export async function runLongBackfillBench(opts: { calls?: number } = {}): Promise<BenchRow[]> {
  const r = await measureLongBackfill(opts);
  const rows: BenchRow[] = r.marks.map((m) => ({
    area: "sync-long",
    metric: `backfill at ${m.calls.toLocaleString("en")} calls: rate so far (since the last mark), peak RSS, warehouse + WAL`,
    target: "no failure; flat rate and memory",
    measured: `${Math.round(m.callsPerSecond).toLocaleString("en")} calls/s (${Math.round(m.recentCallsPerSecond).toLocaleString("en")}) at ${m.seconds.toFixed(0)} s; ${Math.round(m.peakRssMb)} MB; ${(m.warehouseMb / 1000).toFixed(1)} GB + ${Math.round(m.walMb)} MB`,
  }));
  rows.push({
    area: "sync-long",
    metric: `the run (emulator started in ${(r.emulatorStartMs / 1000).toFixed(0)} s)`,
    target: "succeeded",
    measured: r.error ? `${r.status}: ${r.error}` : r.status,
    ok: r.status === "succeeded",
  });
  return rows;
}
