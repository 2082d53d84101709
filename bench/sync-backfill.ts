/**
 * Benchmark: backfill of one app with N calls (~3 participants each) from the emulator,
 * over HTTP on loopback, into a fresh warehouse. Reports calls/s end to end, peak RSS of
 * this process, and where the time goes (waiting for pages, parsing, the write
 * transactions alone).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Db } from "@/db/client";
import type { AppRow } from "@/db/schema";
import { generateCallAt, makeContext } from "@/lib/emulator/generator";
import type { DataMixName } from "@/lib/emulator/mixes";
import { serializeServed } from "@/lib/emulator/quirks";
import type { SessionIdOrder } from "@/lib/emulator/session-ids";
import type { syncApp as SyncAppFn } from "@/lib/sync/sync-app";
import { childCpuSeconds } from "./production-server";
import type { BenchRow } from "./bench-row";

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
  /** CPU of the sync thread and of the write worker alone (Linux); the rest of the process's is GC helpers and I/O threads. */
  mainCpuSeconds?: number;
  writerCpuSeconds?: number;
  /** CPU of the emulator process during the sync (it shares the machine's cores). */
  emulatorCpuSeconds?: number;
}

interface Spawned {
  child: ChildProcess;
  apps: Array<{ appId: string; apiKey: string; region: "us" | "eu" | "in"; callsUrl: string }>;
}

interface EmulatorShape {
  mix: DataMixName;
  /** The upstream's session ids: following time (default) or random UUIDs. */
  sessionIds?: SessionIdOrder;
  /** Override of the mix's largest meeting. */
  maxMeetingSize?: number;
  prerender: boolean;
  latencyMs?: number;
  maxPerPage?: number;
}

export async function spawnBenchEmulator(calls: number, shape: EmulatorShape): Promise<Spawned> {
  const args = ["--import", "tsx", "scripts/emulator.ts", "--port", "0", "--seed", "1", "--apps", `bench:${calls}`, "--now", "1780000000", "--months", "10", "--mix", shape.mix];
  if (shape.maxMeetingSize !== undefined) args.push("--max-meeting-size", String(shape.maxMeetingSize));
  if (shape.sessionIds) args.push("--session-ids", shape.sessionIds);
  if (shape.prerender) args.push("--prerender");
  if (shape.latencyMs) args.push("--latency", String(shape.latencyMs));
  if (shape.maxPerPage) args.push("--max-per-page", String(shape.maxPerPage));
  const child = spawn(
    process.execPath,
    args,
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
  /** The upstream's data shape (lib/emulator/mixes.ts; default "platform": ~1 KB and ~3 participant rows a call). */
  mix?: DataMixName;
  /** The upstream's session ids: following time (default) or random UUIDs. */
  sessionIds?: SessionIdOrder;
  /** Override of the mix's largest meeting. */
  maxMeetingSize?: number;
  /**
   * Emulator serves pre-rendered records (default false: the upstream renders every
   * record as a real one would, and its CPU is reported beside the sync's).
   */
  prerender?: boolean;
  /** A real network: every page answered after this many ms, pages capped at maxPerPage calls. */
  latencyMs?: number;
  maxPerPage?: number;
  perPage?: number;
  /** Sync into this warehouse file and keep it (the HTTP reports bench serves it); default: a temporary file, removed. */
  file?: string;
}

interface BenchBackfill {
  db: Db;
  app: AppRow;
  file: string;
  emu: Spawned;
  emulatorStartMs: number;
  syncApp: typeof SyncAppFn;
}

/**
 * An emulator serving `calls` calls of one app, a warehouse with the app registered (a
 * temporary file unless `keep` names one); the emulator and the temporary file are
 * removed after `run`.
 */
export async function withBenchBackfill<T>(calls: number, shape: EmulatorShape, keep: string | undefined, run: (b: BenchBackfill) => Promise<T>): Promise<T> {
  process.env.AUTH_SECRET ??= "bench-only-secret-bench-only-secret-000";
  process.env.LOG_LEVEL ??= "silent";
  const { openDatabase } = await import("@/db/client");
  const { addApp } = await import("@/lib/apps/registry");
  const { syncApp } = await import("@/lib/sync/sync-app");

  const t0 = performance.now();
  const emu = await spawnBenchEmulator(calls, shape);
  const emulatorStartMs = performance.now() - t0;
  const dir = keep ? undefined : mkdtempSync(path.join(tmpdir(), "callboard-bench-sync-"));
  const file = keep ?? path.join(dir!, "warehouse.db");
  try {
    const db = openDatabase(file);
    const info = emu.apps[0];
    const app = await addApp(db, { appId: info.appId, name: "bench", region: info.region, apiKey: info.apiKey, callsUrl: info.callsUrl });
    return await run({ db, app, file, emu, emulatorStartMs, syncApp });
  } finally {
    emu.child.kill("SIGTERM");
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

export async function measureSyncBackfill({ calls = 1_000_000, writer, batchSize, mix = "platform", sessionIds, maxMeetingSize, prerender = false, latencyMs, maxPerPage, perPage = 1000, file: keep }: SyncBackfillOptions = {}): Promise<SyncBackfillResult> {
  return withBenchBackfill(calls, { mix, sessionIds, maxMeetingSize, prerender, latencyMs, maxPerPage }, keep, async ({ db, app, emu, emulatorStartMs, syncApp }) => {
    // Diagnosis only: measure the sync without other parts' write triggers.
    if (process.env.BENCH_SYNC_DROP_TRIGGERS === "1") {
      for (const t of db.$client.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger'").pluck().all() as string[]) {
        db.$client.exec(`DROP TRIGGER "${t}"`);
      }
    }
    // RSS alone: memoryUsage() also walks V8's heap spaces, about 1 µs a call of the sync
    // thread's CPU when sampled after every page.
    let peak = process.memoryUsage.rss();
    const sample = () => {
      peak = Math.max(peak, process.memoryUsage.rss());
    };
    const sampler = setInterval(sample, 100);
    let summary;
    const cpu0 = process.cpuUsage();
    const emuCpu0 = childCpuSeconds(emu.child.pid);
    try {
      // The event loop is busy inside write transactions: sample after each page as well.
      summary = await syncApp(db, app, { trigger: "manual", perPage, onPage: sample, writer, batchSize });
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
      mainCpuSeconds: seconds(summary.timings.mainCpuMs),
      writerCpuSeconds: seconds(summary.timings.writerCpuMs),
    };
  });
}

const seconds = (ms: number | undefined) => (ms === undefined ? undefined : ms / 1000);
const perCall = (s: number | undefined, calls: number) => (s === undefined ? "?" : ((s * 1e6) / calls).toFixed(0));

const pct = (x: number | undefined) => (x === undefined ? "?" : `${Math.round(x * 100)}%`);

/** Bytes of JSON a call of the mix takes on the wire (a sample of its records). */
function bytesPerCall(mix: DataMixName, sessionIds: SessionIdOrder, sample = 2_000): number {
  const ctx = makeContext({ appId: "bench", seed: 1, count: sample, now: 1_780_000_000, months: 10, mix, sessionIds });
  let bytes = 0;
  for (let s = 0; s < sample; s++) bytes += Buffer.byteLength(serializeServed(generateCallAt(ctx, s), undefined, ctx.mix));
  return Math.round(bytes / sample);
}

/**
 * The mixes every sync target must hold on (issue 15): a target holds when it holds on
 * each. big-meetings has ~28 participant rows a call, so it runs a fifth of the calls and
 * is judged by rows, not calls. Each runs with session ids that follow time; platform also
 * with random ones (an upstream's ids may be UUIDs: the warehouse's session index then
 * takes its inserts anywhere, not at one edge).
 */
export const SYNC_MIXES: Array<{ mix: DataMixName; share: number; judged: boolean; sessionIds: SessionIdOrder }> = [
  { mix: "platform", share: 1, judged: true, sessionIds: "time" },
  { mix: "heavy-users", share: 1, judged: true, sessionIds: "time" },
  { mix: "light-users", share: 1, judged: true, sessionIds: "time" },
  { mix: "big-meetings", share: 0.2, judged: false, sessionIds: "time" },
  { mix: "platform", share: 1, judged: true, sessionIds: "random" },
];

const ID_ORDER_LABEL: Record<SessionIdOrder, string> = { time: "ids in time order", random: "random ids" };

/**
 * The runs of `npm run bench -- --only sync`: the default set, or the mixes asked for with
 * the session id orders asked for (default: time order).
 */
export function syncBenchRuns(mixes?: DataMixName[], sessionIds?: SessionIdOrder[]): typeof SYNC_MIXES {
  if (!mixes && !sessionIds) return SYNC_MIXES;
  const orders = sessionIds ?? ["time"];
  const base = SYNC_MIXES.filter((m) => m.sessionIds === "time" && (!mixes || mixes.includes(m.mix)));
  return orders.flatMap((order) => base.map((m) => ({ ...m, sessionIds: order })));
}

export interface CliSyncResult {
  calls: number;
  wallMs: number;
  callsPerSecond: number;
  /** The upstream's CPU while the command ran (it shares the two cores). */
  emulatorCpuSeconds?: number;
}

/**
 * The sync as a user runs it and as it was measured from outside (issue 15): the wall
 * time of `npm run sync -- --app ID` against a fresh warehouse, npm's and tsx's start,
 * the migrations and the process's exit included.
 */
export async function measureCliSync({ calls = 1_000_000, mix = "platform" as DataMixName, sessionIds = "time" as SessionIdOrder } = {}): Promise<CliSyncResult> {
  return withBenchBackfill(calls, { mix, sessionIds, prerender: false }, undefined, async ({ db, app, file, emu }) => {
    // The command opens the warehouse itself, as it would after `npm run apps -- add`.
    db.$client.close();
    const emuCpu0 = childCpuSeconds(emu.child.pid);
    const t0 = performance.now();
    const env = { ...process.env, DATABASE_PATH: file, LOG_LEVEL: "silent", SYNC_INTERVAL_SECONDS: "0" };
    const child = spawn("npm", ["run", "-s", "sync", "--", "--app", app.appId], { cwd: process.cwd(), env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    const wallMs = performance.now() - t0;
    const emuCpu1 = childCpuSeconds(emu.child.pid);
    if (code !== 0) throw new Error(`npm run sync exited with ${code}: ${output.slice(-2000)}`);
    const { openDatabase } = await import("@/db/client");
    const check = openDatabase(file, { migrate: false });
    const stored = check.$client.prepare("SELECT count(*) FROM calls").pluck().get() as number;
    check.$client.close();
    return {
      calls: stored,
      wallMs: Math.round(wallMs),
      callsPerSecond: Math.round(stored / (wallMs / 1000)),
      emulatorCpuSeconds: emuCpu0 === undefined || emuCpu1 === undefined ? undefined : emuCpu1 - emuCpu0,
    };
  });
}

/** Rows for `npm run bench` (bench/run.ts prints them). */
export async function runSyncBackfillBench(opts: { calls?: number; mixes?: DataMixName[]; sessionIds?: SessionIdOrder[] } = {}): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const total = opts.calls ?? 1_000_000;
  for (const { mix, share, judged, sessionIds } of syncBenchRuns(opts.mixes, opts.sessionIds)) {
    const r = await measureSyncBackfill({ calls: Math.round(total * share), mix, sessionIds });
    const n = r.calls.toLocaleString("en");
    const area = `sync (${mix}, ${ID_ORDER_LABEL[sessionIds]})`;
    const rowsPerSecond = Math.round((r.calls * (1 + r.participantsPerCall)) / (r.wallMs / 1000));
    rows.push(
      {
        area,
        metric: `backfill ${n} calls over HTTP (${bytesPerCall(mix, sessionIds)} B and ${r.participantsPerCall.toFixed(2)} participant rows a call), end to end`,
        target: judged ? ">= 30,000 calls/s" : "",
        measured: `${r.callsPerSecond.toLocaleString("en")} calls/s, ${rowsPerSecond.toLocaleString("en")} rows/s (${(r.wallMs / 1000).toFixed(1)} s)`,
        ok: judged ? r.callsPerSecond >= 30_000 : undefined,
      },
      { area, metric: "peak RSS of the syncing process", target: "< 600 MB", measured: `${r.peakRssMb} MB`, ok: r.peakRssMb < 600 },
      { area, metric: "write transactions alone / parse + hash + classify", target: "", measured: `${(r.dbOnlyMs / 1000).toFixed(1)} s / ${(r.parseMs / 1000).toFixed(1)} s` },
      { area, metric: "CPU during the sync: Callboard (both threads) / the upstream (not prerendered)", target: "", measured: `${r.syncCpuSeconds.toFixed(1)} s / ${r.emulatorCpuSeconds?.toFixed(1) ?? "?"} s (${((r.syncCpuSeconds * 1e6) / r.calls).toFixed(0)} / ${r.emulatorCpuSeconds === undefined ? "?" : ((r.emulatorCpuSeconds * 1e6) / r.calls).toFixed(0)} µs per call)` },
      { area, metric: "CPU per call: sync thread / write worker / the process's other threads (GC helpers, I/O)", target: "", measured: `${perCall(r.mainCpuSeconds, r.calls)} / ${perCall(r.writerCpuSeconds, r.calls)} / ${r.mainCpuSeconds === undefined || r.writerCpuSeconds === undefined ? "?" : perCall(r.syncCpuSeconds - r.mainCpuSeconds - r.writerCpuSeconds, r.calls)} µs` },
      { area, metric: "busy: sync thread / write worker; waiting for pages", target: "", measured: `${pct(r.mainBusy)} / ${pct(r.writerBusy)}; ${(r.fetchWaitMs / 1000).toFixed(1)} s of ${r.pages} pages` },
    );
  }
  // The platform mix's runs again through the command a user types (issue 15 measured it so).
  for (const { mix, share, judged, sessionIds } of syncBenchRuns(opts.mixes, opts.sessionIds).filter((m) => m.mix === "platform")) {
    const r = await measureCliSync({ calls: Math.round(total * share), mix, sessionIds });
    rows.push({
      area: `sync (${mix}, ${ID_ORDER_LABEL[sessionIds]})`,
      metric: `backfill ${r.calls.toLocaleString("en")} calls stored, wall time of \`npm run sync -- --app ID\` (npm's and tsx's start, migrations and exit included; the upstream used ${r.emulatorCpuSeconds?.toFixed(1) ?? "?"} s of CPU)`,
      target: judged ? ">= 30,000 calls/s" : "",
      measured: `${r.callsPerSecond.toLocaleString("en")} calls/s (${(r.wallMs / 1000).toFixed(1)} s)`,
      ok: judged ? r.callsPerSecond >= 30_000 : undefined,
    });
  }
  rows.push(...(await runNetworkSyncBench()));
  return rows;
}

/**
 * Sync over a real network (issue 15): 20,000 calls from an upstream that answers each
 * page after 120 ms and caps pages at 100 calls. One page at a time cannot beat
 * pages × 120 ms (the sequential floor); SYNC_CONCURRENCY pages in flight should take
 * well under a third of it.
 */
export async function runNetworkSyncBench(calls = 20_000, latencyMs = 120, maxPerPage = 100): Promise<BenchRow[]> {
  const r = await measureSyncBackfill({ calls, mix: "platform", latencyMs, maxPerPage });
  const floorMs = Math.ceil(calls / maxPerPage) * latencyMs;
  const ratio = r.wallMs / floorMs;
  return [
    {
      area: "sync (network)",
      metric: `${calls.toLocaleString("en")} calls, pages of ${maxPerPage} answered after ${latencyMs} ms (platform mix), SYNC_CONCURRENCY ${process.env.SYNC_CONCURRENCY ?? "default"}`,
      target: "< 0.33 of the sequential floor",
      measured: `${(r.wallMs / 1000).toFixed(1)} s against ${(floorMs / 1000).toFixed(1)} s (${ratio.toFixed(2)})`,
      ok: ratio < 0.33,
    },
  ];
}
