/**
 * Reports through the production server, as a script or a browser gets them (issue 15):
 * a warehouse synced from the emulator in one data mix, `npm start` on the production
 * build, an API token, and every report route timed over HTTP (median and p95 of
 * sequential requests), beside `/api/health` — the floor every route pays — and the
 * full calls CSV's rate and first byte.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { DataMixName } from "@/lib/emulator/mixes";
import { ensureProductionBuild, startProductionServer } from "./production-server";
import type { BenchRow } from "./run";
import { measureSyncBackfill } from "./sync-backfill";

const SECRET = "bench-http-secret-bench-http-secret-0000";
/** The emulator's history ends here (bench/sync-backfill.ts starts it with --now). */
const NOW = 1_780_000_000;
const DAY = 86_400;

/** Report routes with the filter combinations issue 15 measured from outside, and a few more. */
function reportPaths(): Array<[string, string]> {
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

async function latency(url: string, token: string, runs: number): Promise<{ p50: number; p95: number }> {
  for (let i = 0; i < 3; i++) await timed(url, token); // warm-up: caches and the worker's first build of a sum
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) ms.push(await timed(url, token));
  ms.sort((a, b) => a - b);
  return { p50: quantile(ms, 0.5), p95: quantile(ms, 0.95) };
}

/** The whole calls CSV, read as a client reads it: rows/s and time to the first byte. */
async function csvRate(base: string, token: string): Promise<{ rows: number; seconds: number; firstByteMs: number }> {
  const t0 = performance.now();
  const res = await fetch(`${base}/api/v1/calls?format=csv`, { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok || !res.body) throw new Error(`calls CSV: HTTP ${res.status}`);
  let firstByteMs = -1;
  // Records end in CRLF (RFC 4180); a line break inside a quoted cell is a bare LF.
  let records = 0;
  let lastWasCr = false;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value: chunk } = await reader.read();
    if (done) break;
    if (firstByteMs < 0) firstByteMs = performance.now() - t0;
    for (let i = 0; i < chunk.length; i++) {
      if (chunk[i] === 10 && lastWasCr) records++;
      lastWasCr = chunk[i] === 13;
    }
  }
  return { rows: records - 1, seconds: (performance.now() - t0) / 1000, firstByteMs };
}

async function prepareAccess(file: string): Promise<string> {
  process.env.AUTH_SECRET = SECRET;
  const { resetEnvForTests } = await import("@/lib/config/env");
  resetEnvForTests();
  const { openDatabase } = await import("@/db/client");
  const { createUser } = await import("@/lib/auth/users");
  const { createApiToken } = await import("@/lib/auth/tokens");
  const db = openDatabase(file);
  try {
    const user = await createUser(db, { email: "bench@callboard.test", password: "bench-password-123", role: "admin" });
    return createApiToken(db, { userId: user.id, name: "bench" }).token;
  } finally {
    db.$client.close();
  }
}

export interface HttpReportsOptions {
  calls?: number;
  mixes?: DataMixName[];
  runs?: number;
}

export async function runHttpReportsBench({ calls = 1_000_000, mixes = ["platform", "light-users"], runs = 40 }: HttpReportsOptions = {}): Promise<BenchRow[]> {
  ensureProductionBuild();
  const rows: BenchRow[] = [];
  const target = calls >= 5_000_000 ? 300 : 50;
  for (const mix of mixes) {
    const dir = mkdtempSync(path.join(tmpdir(), "callboard-bench-http-"));
    const file = path.join(dir, "warehouse.db");
    try {
      // The upstream prerenders here: building the warehouse is not what is measured.
      await measureSyncBackfill({ calls, mix, prerender: true, file });
      const token = await prepareAccess(file);
      const server = await startProductionServer({ DATABASE_PATH: file, AUTH_SECRET: SECRET });
      try {
        const area = `http ${(calls / 1e6).toLocaleString("en")}M (${mix})`;
        const health = await latency(`${server.url}/api/health`, token, runs);
        rows.push({ area, metric: "/api/health (the floor every route pays)", target: "", measured: `${health.p50.toFixed(1)} / ${health.p95.toFixed(1)} ms` });
        for (const [name, p] of reportPaths()) {
          const l = await latency(`${server.url}${p}`, token, runs);
          rows.push({ area, metric: `${name} (p50 / p95)`, target: `p95 < ${target} ms`, measured: `${l.p50.toFixed(1)} / ${l.p95.toFixed(1)} ms`, ok: l.p95 < target });
        }
        const csv = await csvRate(server.url, token);
        const rate = Math.round(csv.rows / csv.seconds);
        rows.push({ area, metric: `calls CSV, ${csv.rows.toLocaleString("en")} rows through the server (first byte ${csv.firstByteMs.toFixed(0)} ms)`, target: ">= 250,000 rows/s", measured: `${rate.toLocaleString("en")} rows/s`, ok: rate >= 250_000 });
      } finally {
        await server.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return rows;
}
