/**
 * Reports through the production server, as a script or a browser gets them (issue 15):
 * a warehouse synced from the emulator in one data mix, `npm start` on the production
 * build, an API token, and every report route timed over HTTP (median and p95 of
 * sequential requests), beside `/api/health` — the floor every route pays — and the
 * full calls CSV's rate and first byte.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import type { DataMixName } from "@/lib/emulator/mixes";
import { CrlfCounter } from "./crlf-counter";
import { childCpuSeconds, ensureProductionBuild, startProductionServer } from "./production-server";
import type { BenchRow } from "./run";
import { measureSyncBackfill, SYNC_MIXES } from "./sync-backfill";

export const SECRET = "bench-http-secret-bench-http-secret-0000";
/** The emulator's history ends here (bench/sync-backfill.ts starts it with --now). */
export const NOW = 1_780_000_000;
const DAY = 86_400;

/** Report routes with the filter combinations issue 15 measured from outside, and a few more. */
export function reportPaths(): Array<[string, string]> {
  const month = `from=${NOW - 30 * DAY}&to=${NOW}`;
  return [
    ["calls, first page", "/api/v1/calls"],
    ["calls, page 50 by minutes", "/api/v1/calls?sort=minutes&page=50"],
    ["calls, video & ended, last 30 days", `/api/v1/calls?type=video&status=ended&${month}`],
    ["totals vs previous 30 days", `/api/v1/insights/totals?${month}`],
    ["breakdowns", "/api/v1/breakdowns"],
    ["durations", "/api/v1/insights/durations"],
    ["daily, meet, Berlin", "/api/v1/usage/daily?mode=meet&tz=Europe/Berlin"],
    ["daily, Kathmandu", "/api/v1/usage/daily?tz=Asia/Kathmandu"],
    ["participants, video & group", "/api/v1/usage/participants?type=video&receiverType=group"],
    ["participants by minutes", "/api/v1/usage/participants?sort=minutes"],
    ["apps", "/api/v1/usage/apps"],
    ["heatmap, Berlin", "/api/v1/insights/heatmap?tz=Europe/Berlin"],
    ["heatmap, audio & ended", "/api/v1/insights/heatmap?type=audio&status=ended"],
    ["engagement, video & ended", "/api/v1/insights/engagement?type=video&status=ended"],
    ["recordings", "/api/v1/recordings"],
  ];
}

async function timed(url: string, token: string): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  await res.arrayBuffer();
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return performance.now() - t0;
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}

/**
/**
 * Median and p95 of `runs` sequential requests after three warm-ups, and the server's CPU
 * per request when its pid is given (all its threads: the request's, the analytics
 * worker's): on a shared box the latency moves with the neighbours' load, the CPU a
 * request costs much less. With `budgetMs`, a slow route stops sooner (one warm-up, then
 * at least three timed requests): `n` says how many were timed.
 */
export async function latency(
  url: string,
  token: string,
  runs: number,
  { serverPid, budgetMs = Infinity }: { serverPid?: number; budgetMs?: number } = {},
): Promise<{ p50: number; p95: number; n: number; cpuMs?: number }> {
  const warmups = budgetMs === Infinity ? 3 : 1;
  for (let i = 0; i < warmups; i++) await timed(url, token); // caches and the worker's first build of a sum
  const ms: number[] = [];
  const cpu0 = childCpuSeconds(serverPid);
  const t0 = performance.now();
  while (ms.length < runs && (ms.length < 3 || performance.now() - t0 < budgetMs)) ms.push(await timed(url, token));
  const cpu1 = childCpuSeconds(serverPid);
  ms.sort((a, b) => a - b);
  const cpuMs = cpu0 === undefined || cpu1 === undefined ? undefined : ((cpu1 - cpu0) * 1000) / ms.length;
  return { p50: quantile(ms, 0.5), p95: quantile(ms, 0.95), n: ms.length, cpuMs };
}

const shown = (l: { p50: number; p95: number; cpuMs?: number }) =>
  `${l.p50.toFixed(1)} / ${l.p95.toFixed(1)} ms (CPU ${l.cpuMs === undefined ? "?" : l.cpuMs.toFixed(1)} ms)`;

/**
 * The whole calls CSV (`query` narrows it), read as a client reads it: rows/s and time to
 * the first byte. `encoding`: what the client accepts — `identity` as curl asks by
 * default, `gzip, deflate` as fetch does (the server then compresses, and the client
 * inflates). The client is curl where the machine has it (`curl --compressed` for gzip):
 * Node's fetch inflated the same 1M-row gzip answer in 6 s once and 28 s the next time in
 * one process, and stalled on a 10M-row export at 170 KB/s with the server idle, so its
 * figures were the client's, not the server's (docs/benchmarks.md, session 8).
 */
export async function csvRate(
  base: string,
  token: string,
  { serverPid, encoding = "identity", query = "" }: { serverPid?: number; encoding?: string; query?: string } = {},
): Promise<{ rows: number; seconds: number; firstByteMs: number; cpuSeconds?: number }> {
  const url = `${base}/api/v1/calls?format=csv${query}`;
  const cpu0 = childCpuSeconds(serverPid);
  const t0 = performance.now();
  let firstByteMs = -1;
  const records = new CrlfCounter();
  const count = (chunk: Uint8Array) => {
    if (firstByteMs < 0) firstByteMs = performance.now() - t0;
    records.add(chunk);
  };
  if (existsSync(CURL)) await curlInto(url, token, encoding, count);
  else {
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}`, "accept-encoding": encoding } });
    if (!res.ok || !res.body) throw new Error(`calls CSV: HTTP ${res.status}`);
    const reader = res.body.getReader();
    for (;;) {
      const { done, value: chunk } = await reader.read();
      if (done) break;
      count(chunk);
    }
  }
  const cpu1 = childCpuSeconds(serverPid);
  return { rows: records.count - 1, seconds: (performance.now() - t0) / 1000, firstByteMs, cpuSeconds: cpu0 === undefined || cpu1 === undefined ? undefined : cpu1 - cpu0 };
}

const CURL = "/usr/bin/curl";

/** curl's (inflated) body, chunk by chunk; the token goes in on stdin, never on the command line. */
function curlInto(url: string, token: string, encoding: string, onChunk: (chunk: Uint8Array) => void): Promise<void> {
  const args = ["-sS", "--fail", "-K", "-", ...(encoding === "identity" ? ["-H", "accept-encoding: identity"] : ["--compressed"]), url];
  const child = spawn(CURL, args, { stdio: ["pipe", "pipe", "pipe"] });
  child.stdin.end(`header = "authorization: Bearer ${token}"\n`);
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  child.stdout.on("data", onChunk);
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`calls CSV: curl exited ${code}: ${stderr.trim()}`))));
  });
}

export async function prepareAccess(file: string): Promise<string> {
  process.env.AUTH_SECRET = SECRET;
  const { resetEnvForTests } = await import("@/lib/config/env");
  resetEnvForTests();
  const { openDatabase } = await import("@/db/client");
  const { createUser } = await import("@/lib/auth/users");
  const { createApiToken } = await import("@/lib/auth/tokens");
  const db = openDatabase(file);
  try {
    // A kept warehouse (--keep) already has the bench's user from its first run.
    const existing = db.$client.prepare<[string], { pk: number }>("SELECT pk FROM users WHERE email = ?").get("bench@callboard.test");
    const userId = existing?.pk ?? (await createUser(db, { email: "bench@callboard.test", password: "bench-password-123", role: "admin" })).id;
    return (await createApiToken(db, { userId, name: "bench" })).token;
  } finally {
    db.$client.close();
  }
}

export interface HttpReportsOptions {
  calls?: number;
  mixes?: DataMixName[];
  runs?: number;
  /** Keep each mix's warehouse in this folder and reuse it on the next run (building 10M takes most of an hour on a busy box). */
  keepDir?: string;
}

/**
 * Every mix the sync is judged on (bench/sync-backfill.ts SYNC_MIXES; big-meetings, ~28
 * participant rows a call, at its share of the calls). The client asks as fetch does
 * (`accept-encoding: gzip, deflate`): answers of 1 KB or more come gzipped; the calls CSV
 * is read both plain and gzipped.
 */
export async function runHttpReportsBench({ calls = 1_000_000, mixes = SYNC_MIXES.filter((m) => m.sessionIds === "time").map((m) => m.mix), runs = 40, keepDir }: HttpReportsOptions = {}): Promise<BenchRow[]> {
  ensureProductionBuild();
  const rows: BenchRow[] = [];
  const target = calls >= 5_000_000 ? 300 : 50;
  if (keepDir) mkdirSync(keepDir, { recursive: true });
  for (const mix of mixes) {
    const share = SYNC_MIXES.find((m) => m.mix === mix)?.share ?? 1;
    const n = Math.round(calls * share);
    const dir = keepDir ?? mkdtempSync(path.join(tmpdir(), "callboard-bench-http-"));
    const file = path.join(dir, keepDir ? `${mix}-${n}.db` : "warehouse.db");
    // A kept warehouse counts once its sync finished: an interrupted build is built again.
    const built = `${file}.built`;
    try {
      if (!keepDir || !existsSync(built)) {
        for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });
        // The upstream prerenders here: building the warehouse is not what is measured. Not
        // at 5M and more: prerendering 10M records took the emulator past its 180 s start limit.
        await measureSyncBackfill({ calls: n, mix, prerender: n < 5_000_000, file });
        if (keepDir) writeFileSync(built, "");
      }
      const token = await prepareAccess(file);
      const server = await startProductionServer({ DATABASE_PATH: file, AUTH_SECRET: SECRET });
      const pid = server.child.pid;
      try {
        const area = `http ${(n / 1e6).toLocaleString("en")}M (${mix}, load ${loadavg()[0]!.toFixed(1)})`;
        // The analytics worker loads the store (and builds its block sums) after the server
        // answers health: a first report waits for it, so that no figure pays for the load.
        await timed(`${server.url}/api/v1/usage/apps`, token);
        const health = await latency(`${server.url}/api/health`, token, runs, { serverPid: pid });
        rows.push({ area, metric: "/api/health (the floor every route pays; p50 / p95, server CPU a request)", target: "", measured: shown(health) });
        for (const [name, p] of reportPaths()) {
          const l = await latency(`${server.url}${p}`, token, runs, { serverPid: pid });
          rows.push({ area, metric: `${name} (p50 / p95, server CPU a request)`, target: `p95 < ${target} ms`, measured: shown(l), ok: l.p95 < target });
        }
        for (const encoding of ["identity", "gzip, deflate"]) {
          const csv = await csvRate(server.url, token, { serverPid: pid, encoding });
          const rate = Math.round(csv.rows / csv.seconds);
          const cpu = csv.cpuSeconds === undefined ? "" : `, server CPU ${((csv.cpuSeconds * 1e6) / csv.rows).toFixed(1)} µs a row`;
          const how = `${encoding === "identity" ? "plain (as curl asks)" : "gzip (as fetch and browsers ask)"}, read by ${existsSync(CURL) ? "curl" : "fetch"}, records counted with Buffer.indexOf`;
          rows.push({ area, metric: `calls CSV, ${csv.rows.toLocaleString("en")} rows through the server, ${how} (first byte ${csv.firstByteMs.toFixed(0)} ms${cpu})`, target: ">= 250,000 rows/s", measured: `${rate.toLocaleString("en")} rows/s`, ok: rate >= 250_000 });
        }
      } finally {
        await server.stop();
      }
    } finally {
      if (!keepDir) rmSync(dir, { recursive: true, force: true });
    }
  }
  return rows;
}
