/**
 * Benchmark (issue 25: "chdb at 10M for the current server"): every report of
 * bench/http-reports.ts's list, answered by the ClickHouse engine over chdb, a current
 * ClickHouse embedded in this process (lib/clickhouse/test-chdb.ts), on `calls` calls
 * generated inside it into schema v2 by the same statements as the two-shard bench
 * (bench/clickhouse-v2-data.ts, one "shard" holding every call).
 *
 * chdb has no network side, so no production server can read it: each request runs the
 * production route handler in this process (lib/analytics/report-handler.ts: the token
 * checked against a SQLite file, the filters parsed, the engine asked, the JSON encoded),
 * with the engine built on the chdb session. What is missing against a real request is
 * Next's routing and the HTTP round trip (a few ms; see the two-shard rows for both).
 * The calls CSV is not timed here: the chdb test client gathers a whole answer in memory.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { BENCH_APPS } from "./clickhouse-data";
import { generateUidsSql, generateV2Sql } from "./clickhouse-v2-data";
import { prepareAccess, reportPaths } from "./http-reports";
import type { BenchRow } from "./bench-row";
import type { ReportName } from "@/lib/analytics/report-csv-writers";

const DB = "bench_chdb";
const load = () => `load ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}`;
const log = (line: string) => console.log(line);

/** The report each bench path's route answers (app/api/v1/…/route.ts). */
const REPORT_OF_PATH: Record<string, ReportName> = {
  "/api/v1/calls": "calls",
  "/api/v1/insights/totals": "totals",
  "/api/v1/breakdowns": "breakdowns",
  "/api/v1/insights/durations": "durations",
  "/api/v1/usage/daily": "daily",
  "/api/v1/usage/participants": "participants",
  "/api/v1/usage/apps": "apps",
  "/api/v1/insights/heatmap": "heatmap",
  "/api/v1/insights/engagement": "engagement",
  "/api/v1/recordings": "recordings",
};

/** The two-shard statements for a single server: its tables carry no `_local` suffix. */
const singleServer = (sql: string) => sql.replace(/\b(\w+)_local\b/g, "$1");

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];

export async function runClickHouseChdbBench({ calls = 10_000_000, runs = 15 }: { calls?: number; runs?: number } = {}): Promise<BenchRow[]> {
  const { openChdb } = await import("@/lib/clickhouse/test-chdb");
  const { applyMigrations } = await import("@/lib/clickhouse");
  const { createClickHouseEngine } = await import("@/lib/analytics/engines/clickhouse/engine");
  const { handleReport } = await import("@/lib/analytics/report-handler");
  const area = `clickhouse v2 on chdb ${(calls / 1e6).toLocaleString("en")}M (one embedded ClickHouse, in-process route handler)`;
  const rows: BenchRow[] = [];
  const dir = mkdtempSync(path.join(os.tmpdir(), "callboard-bench-chdb-"));
  const file = path.join(dir, "state.db");
  process.env.DATABASE_PATH = file;
  const token = await prepareAccess(file); // also points the env at the bench's AUTH_SECRET
  const { openDatabase } = await import("@/db/client");
  const { addApp } = await import("@/lib/apps/registry");
  const { authorize } = await import("@/lib/auth/authorize");
  const db = openDatabase(file);
  const chdb = openChdb(DB);
  try {
    // pks 1..BENCH_APPS, as the generated calls' app_pk.
    for (let i = 1; i <= BENCH_APPS; i++) await addApp(db, { appId: `bench${i}`, name: `Bench ${i}`, region: "us", apiKey: `bench-key-${i}`, callsUrl: "http://127.0.0.1:9/v3/calls" });
    await applyMigrations(chdb, chdb.placement);
    await chdb.command(singleServer(generateUidsSql(DB, BENCH_APPS)));
    const t0 = performance.now();
    const chunk = 1_000_000;
    for (let from = 0; from < calls; from += chunk) {
      for (const statement of generateV2Sql(DB, from, Math.min(chunk, calls - from), 0, 1)) await chdb.command(singleServer(statement));
      log(`  chdb: generated ${Math.min(calls, from + chunk).toLocaleString("en")} / ${calls.toLocaleString("en")} calls (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
    }
    rows.push({ area, metric: `data: generated in chdb (the two-shard bench's statements; ${load()})`, target: "", measured: `${((performance.now() - t0) / 1000).toFixed(0)} s` });

    const engine = createClickHouseEngine({ ch: chdb, db: () => db });
    const deps = { authorize, engine: () => engine };
    const ask = async (pathAndQuery: string): Promise<number> => {
      const url = new URL(pathAndQuery, "http://bench.invalid");
      const report = REPORT_OF_PATH[url.pathname];
      const request = new Request(url, { headers: { authorization: `Bearer ${token}` } });
      const t = performance.now();
      const res = await handleReport(request, report, deps);
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`${pathAndQuery}: HTTP ${res.status}`);
      return performance.now() - t;
    };
    for (const [name, pathAndQuery] of reportPaths()) {
      for (let i = 0; i < 2; i++) await ask(pathAndQuery); // caches, the schema check
      const ms: number[] = [];
      for (let i = 0; i < runs; i++) ms.push(await ask(pathAndQuery));
      ms.sort((a, b) => a - b);
      const p95 = quantile(ms, 0.95);
      rows.push({ area, metric: `${name} (p50 / p95 of ${runs}, ${load()})`, target: "p95 < 300 ms", measured: `${quantile(ms, 0.5).toFixed(1)} / ${p95.toFixed(1)} ms`, ok: p95 < 300 });
    }
  } finally {
    await chdb.close();
    db.$client.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}
