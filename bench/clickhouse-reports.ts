/**
 * Benchmark (issue 13): every report through the production server in ClickHouse mode, on
 * a two-shard cluster of local clickhouse-server processes (the test harness, cluster
 * `callboard_test`, CLICKHOUSE_CLUSTER set), beside the in-memory engine.
 *
 *  1. Same size, both engines: a SQLite warehouse of `compareCalls` calls synced from the
 *     emulator ("platform" mix); the production server on it with the in-memory engine;
 *     `npm run warehouse -- copy --to clickhouse` of it (calls/s, as a user runs it); the
 *     production server on the copy in ClickHouse mode. Ratios are ClickHouse / memory.
 *  2. Large: `calls` calls generated inside ClickHouse into schema v2 (bench/clickhouse-v2-data.ts), the
 *     production server in ClickHouse mode: p50/p95 of every report route, the calls CSV's
 *     rows/s, disk per call, peak memory of the server and of each ClickHouse server.
 *
 * Each figure carries the load average when it was taken: the machine is shared.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os, { tmpdir } from "node:os";
import path from "node:path";
import { BENCH_APPS, onServer } from "./clickhouse-data";
import { generateV2Calls, RESYNCED_EVERY } from "./clickhouse-v2-data";
import { serverPid } from "./clickhouse-sync";
import { csvRate, latency, NOW, prepareAccess, reportPaths, SECRET } from "./http-reports";
import { ensureProductionBuild, startProductionServer } from "./production-server";
import type { BenchRow } from "./bench-row";
import { measureSyncBackfill } from "./sync-backfill";
import type { TestClickHouse } from "@/lib/clickhouse/test-clickhouse";

const DAY = 86_400;
const load = () => `load ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}`;
const millions = (n: number) => `${(n / 1e6).toLocaleString("en")}M`;
const log = (line: string) => console.log(line);

/** Peak resident memory of a process so far (VmHWM), in MB; undefined off Linux or when gone. */
export function peakRssMb(pid: number | undefined): number | undefined {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb === undefined ? undefined : Math.round(Number(kb) / 1024);
  } catch {
    return undefined;
  }
}

/** Bytes on disk of one database on every shard (its data directory, as `du` counts it). */
function diskBytes(dirs: string[], database: string): number {
  let total = 0;
  for (const dir of dirs) {
    const r = spawnSync("du", ["-sb", path.join(dir, "data", "data", database)], { encoding: "utf8" });
    total += Number(r.stdout.split("\t")[0]) || 0;
  }
  return total;
}

type Latencies = Map<string, { p50: number; p95: number; n: number; error?: string }>;

/** Time spent timing one route at most (after its first three requests): a slow route on a busy machine stops sooner. */
const ROUTE_BUDGET_MS = 30_000;

/** Every report route's median and p95 through a production server started with `env`; the server's peak RSS. */
async function measureServer(env: Record<string, string>, token: string, runs: number, csvQuery?: string) {
  const server = await startProductionServer({ AUTH_SECRET: SECRET, ...env });
  try {
    const routes: Latencies = new Map();
    for (const [name, p] of reportPaths()) {
      try {
        routes.set(name, await latency(`${server.url}${p}`, token, runs, { budgetMs: ROUTE_BUDGET_MS }));
      } catch (err) {
        // A route that fails (or outlasts the client's 300 s header timeout) is a figure too: the run goes on.
        routes.set(name, { p50: NaN, p95: NaN, n: 0, error: String((err as Error).cause ?? (err as Error).message).slice(0, 120) });
      }
    }
    const routesLoad = load();
    const csv = csvQuery === undefined ? undefined : await csvRate(server.url, token, { query: csvQuery }).catch(() => undefined);
    return { routes, routesLoad, csv, csvLoad: load(), peakMb: peakRssMb(server.child.pid) };
  } finally {
    await server.stop();
  }
}

/** `npm run warehouse -- copy --to clickhouse` as a user runs it; wall seconds. */
async function timeCopy(env: Record<string, string>): Promise<number> {
  const t0 = performance.now();
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/warehouse.ts", "copy", "--to", "clickhouse", "--no-progress"], { env: { ...process.env, ...env }, stdio: ["ignore", "inherit", "inherit"] });
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  if (code !== 0) throw new Error(`warehouse copy exited with code ${code}`);
  return (performance.now() - t0) / 1000;
}

/** `npm run db:migrate` (the move to schema v2) as a user runs it; wall seconds. */
async function timeMigrate(env: Record<string, string>): Promise<number> {
  const t0 = performance.now();
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/migrate.ts", "--no-progress"], { env: { ...process.env, ...env }, stdio: ["ignore", "inherit", "inherit"] });
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  if (code !== 0) throw new Error(`db:migrate exited with code ${code}`);
  return (performance.now() - t0) / 1000;
}

/** A SQLite file holding what the server needs besides the facts: an admin's API token and the generated apps. */
export async function sqliteForGenerated(file: string): Promise<string> {
  const token = await prepareAccess(file);
  const { openDatabase } = await import("@/db/client");
  const { addApp } = await import("@/lib/apps/registry");
  const db = openDatabase(file);
  try {
    // pks 1..BENCH_APPS, as the generated calls' app_pk (never synced: SYNC_INTERVAL_SECONDS=0).
    for (let i = 1; i <= BENCH_APPS; i++) await addApp(db, { appId: `bench${i}`, name: `Bench ${i}`, region: "us", apiKey: `bench-key-${i}`, callsUrl: "http://127.0.0.1:9/v3/calls" });
  } finally {
    db.$client.close();
  }
  return token;
}

export interface ClickHouseReportsOptions {
  /** Calls generated in ClickHouse (default 10M; 0: skip that part). */
  calls?: number;
  /** Calls of the same-size comparison with the in-memory engine and the copy (default 1M; 0: skip that part). */
  compareCalls?: number;
  runs?: number;
}

export async function runClickHouseReportsBench({ calls = 10_000_000, compareCalls = 1_000_000, runs = 30 }: ClickHouseReportsOptions = {}): Promise<BenchRow[]> {
  ensureProductionBuild();
  process.env.LOG_LEVEL ??= "silent";
  const { startClickHouse } = await import("@/lib/clickhouse/test-clickhouse");
  const dir = mkdtempSync(path.join(tmpdir(), "callboard-bench-chreports-"));
  const ch = await startClickHouse({ shards: 2, parentDir: dir });
  const rows: BenchRow[] = [];
  try {
    if (compareCalls > 0) rows.push(...(await sameSize(ch, dir, compareCalls, runs)));
    if (calls > 0) rows.push(...(await generated(ch, dir, calls, runs)));
  } finally {
    await ch.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

/** Part 1: the in-memory engine, the copy command and the ClickHouse engine on the same synced calls. */
async function sameSize(ch: TestClickHouse, dir: string, compareCalls: number, runs: number): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
    const file = path.join(dir, "warehouse.db");
    log(`clickhouse: syncing ${compareCalls.toLocaleString("en")} calls from the emulator into SQLite…`);
    await measureSyncBackfill({ calls: compareCalls, mix: "platform", prerender: true, file });
    const token = await prepareAccess(file);
    log("clickhouse: the in-memory engine…");
    const mem = await measureServer({ DATABASE_PATH: file }, token, runs);
    log("clickhouse: npm run warehouse -- copy --to clickhouse…");
    const copyEnv = { DATABASE_PATH: file, ...ch.env("bench_copy") };
    const copySeconds = await timeCopy(copyEnv);
    const copyLoad = load();
    // The copy writes schema v1; the engine reads v2: npm run db:migrate moves it (lib/clickhouse/move-v2.ts).
    const moveSeconds = await timeMigrate(copyEnv);
    const moveLoad = load();
    const copyDisk = diskBytes(ch.servers.map((s) => s.dir), "bench_copy");
    log("clickhouse: the ClickHouse engine on the copy…");
    const same = await measureServer(copyEnv, token, runs);
    const area1 = `clickhouse vs memory, ${millions(compareCalls)}`;
    const copyRate = Math.round(compareCalls / copySeconds);
    rows.push({ area: area1, metric: `warehouse copy --to clickhouse of ${compareCalls.toLocaleString("en")} synced calls (whole command; ${copyLoad})`, target: "", measured: `${copyRate.toLocaleString("en")} calls/s (${copySeconds.toFixed(1)} s)` });
    rows.push({ area: area1, metric: `npm run db:migrate moving the copy to schema v2 (${moveLoad})`, target: "", measured: `${Math.round(compareCalls / moveSeconds).toLocaleString("en")} calls/s (${moveSeconds.toFixed(1)} s)` });
    rows.push({ area: area1, metric: "ClickHouse disk per call, copied calls (the platform's raw records)", target: "", measured: `${(copyDisk / compareCalls).toFixed(0)} bytes` });
    for (const [name, m] of mem.routes) {
      const c = same.routes.get(name)!;
      rows.push({ area: area1, metric: `${name}: memory / ClickHouse p50, p95 (of ${m.n} / ${c.n})`, target: "", measured: m.error || c.error ? `failed: ${m.error ?? c.error}` : `${m.p50.toFixed(1)} / ${c.p50.toFixed(1)} ms, ${m.p95.toFixed(1)} / ${c.p95.toFixed(1)} ms (x${(c.p95 / m.p95).toFixed(1)})` });
    }
    rows.push({ area: area1, metric: `routes measured at (memory; ClickHouse)`, target: "", measured: `${mem.routesLoad}; ${same.routesLoad}` });
    rows.push({ area: area1, metric: "peak RSS of the server: memory engine / ClickHouse engine", target: "< 600 MB", measured: `${mem.peakMb ?? "?"} / ${same.peakMb ?? "?"} MB`, ok: (mem.peakMb ?? Infinity) < 600 && (same.peakMb ?? Infinity) < 600 });

  return rows;
}

/** Bytes on disk of each table's active parts, both shards summed (system.parts: what merges and drops act on). */
async function bytesByTable(ch: TestClickHouse, database: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const server of ch.servers) {
    const text = await onServer(server, ch.password, `SELECT table, sum(bytes_on_disk) FROM system.parts WHERE active AND database = '${database}' GROUP BY table FORMAT TabSeparated`);
    for (const line of text.trim().split("\n")) {
      const [table, bytes] = line.split("\t");
      if (table) out.set(table, (out.get(table) ?? 0) + Number(bytes));
    }
  }
  return out;
}

/** The tables a call with its participants is stored in (schema v2's facts and pre-aggregates), as opposed to its raw record and links. */
const FACT_TABLES = /^(calls_v2|participants_v2|calls_by_|participants_by_|uids)/;

/** Issue 25's storage figure: a call with its participants (facts and pre-aggregates, unmerged as generated), then the rest by table. */
function storageRow(area: string, byTable: Map<string, number>, calls: number): BenchRow {
  const perCall = (b: number) => (b / calls).toFixed(1);
  const tables = [...byTable].filter(([, b]) => b > 0).sort((a, b) => b[1] - a[1]);
  const facts = tables.filter(([t]) => FACT_TABLES.test(t)).reduce((s, [, b]) => s + b, 0);
  const detail = tables.map(([t, b]) => `${t.replace(/_local$/, "")} ${perCall(b)}`).join(", ");
  return { area, metric: `storage, a call with its participants (active parts, unmerged; by table, bytes a call: ${detail})`, target: "<= 150 bytes", measured: `${perCall(facts)} bytes`, ok: facts / calls <= 150 };
}

/** Part 2: `calls` calls generated in ClickHouse, the ClickHouse engine through the production server. */
async function generated(ch: TestClickHouse, dir: string, calls: number, runs: number): Promise<BenchRow[]> {
  const { migrateClickHouse } = await import("@/lib/clickhouse/migrate");
  const rows: BenchRow[] = [];
  const cluster = `${ch.servers.length} local shards (${ch.cluster})`;
    const database = "bench_generated";
    await migrateClickHouse(ch.config(database));
    log(`clickhouse: generating ${calls.toLocaleString("en")} calls on ${cluster}…`);
    const genSeconds = await generateV2Calls(ch.servers, ch.password, database, calls, log);
    const genLoad = load();
    const disk = diskBytes(ch.servers.map((s) => s.dir), database);
    const byTable = await bytesByTable(ch, database);
    const genFile = path.join(dir, "generated.db");
    const genToken = await sqliteForGenerated(genFile);
    log("clickhouse: the ClickHouse engine on the generated calls…");
    const weekCsv = `&from=${NOW - 7 * DAY}&to=${NOW}`;
    const big = await measureServer({ DATABASE_PATH: genFile, ...ch.env(database) }, genToken, runs, weekCsv);
    const area2 = `clickhouse ${millions(calls)} (${cluster})`;
    const target = calls >= 50_000_000 ? 2000 : 300;
    rows.push({ area: area2, metric: `data: generated in ClickHouse into schema v2 (INSERT … SELECT from numbers(), platform-mix shape, 1 in ${RESYNCED_EVERY} re-synced with its cancel row unmerged; ${genLoad})`, target: "", measured: `${genSeconds.toFixed(0)} s` });
    rows.push({ area: area2, metric: "ClickHouse disk per call (both shards, every table, raw records included)", target: "", measured: `${(disk / calls).toFixed(0)} bytes (${(disk / 1e9).toFixed(2)} GB)` });
    rows.push(storageRow(area2, byTable, calls));
    for (const [name, l] of big.routes) rows.push({ area: area2, metric: `${name} (p50 / p95 of ${l.n})`, target: `p95 < ${target} ms`, measured: l.error ? `failed: ${l.error}` : `${l.p50.toFixed(1)} / ${l.p95.toFixed(1)} ms`, ok: !l.error && l.p95 < target });
    rows.push({ area: area2, metric: "routes measured at", target: "", measured: big.routesLoad });
    if (big.csv) {
      const rate = Math.round(big.csv.rows / big.csv.seconds);
      rows.push({ area: area2, metric: `calls CSV, last 7 days: ${big.csv.rows.toLocaleString("en")} rows (first byte ${big.csv.firstByteMs.toFixed(0)} ms; ${big.csvLoad})`, target: ">= 100,000 rows/s", measured: `${rate.toLocaleString("en")} rows/s`, ok: rate >= 100_000 });
    }
    rows.push({ area: area2, metric: "peak RSS of the Callboard server (ClickHouse mode)", target: "< 600 MB", measured: `${big.peakMb ?? "?"} MB`, ok: (big.peakMb ?? Infinity) < 600 });
    const chPeaks = ch.servers.map((s) => peakRssMb(serverPid(s.dir)));
    rows.push({ area: area2, metric: "peak RSS of each clickhouse-server over the whole run (shard 1 / shard 2)", target: "", measured: `${chPeaks.map((p) => p ?? "?").join(" / ")} MB` });
  return rows;
}
