/**
 * Benchmark of the calls CSV from ClickHouse (issue 25: ≥ 100,000 rows/s):
 * `npm run bench -- --only clickhouse-csv [--calls N] [--before DIR]`. Calls generated
 * inside ClickHouse into schema v2 on two local 18.16 shards (bench/clickhouse-v2-data.ts),
 * then, the whole calls list each time (median of `runs`):
 *  1. where the time goes, in this process: the query alone (FORMAT Null), its RowBinary
 *     bytes moved, RowBinary decoded into CSV bytes (the engine's path), and the path
 *     before it — JSONEachRow moved, parsed, and written by csvRawStream;
 *  2. the CSV through the production server with a token (`curl`), rows/s, first byte,
 *     server CPU a row and peak RSS; with `--before DIR`, the same through a checkout of
 *     the earlier code (with its own production build) in turn with this one: A/B.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os, { tmpdir } from "node:os";
import path from "node:path";
import { generateV2Calls } from "./clickhouse-v2-data";
import { peakRssMb, sqliteForGenerated } from "./clickhouse-reports";
import { csvRate, SECRET } from "./http-reports";
import { ensureProductionBuild, startProductionServer } from "./production-server";
import type { BenchRow } from "./bench-row";

const load = () => `load ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}`;
const log = (line: string) => console.log(line);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rate = (rows: number, seconds: number) => `${Math.round(rows / seconds).toLocaleString("en")} rows/s`;

export interface ClickHouseCsvOptions {
  calls?: number;
  runs?: number;
  /** A checkout of the code to compare with (its own `.next` build and node_modules). */
  beforeDir?: string;
}

/** Wall seconds and this process's CPU seconds of `fn`. */
async function timed(fn: () => Promise<unknown>): Promise<{ wall: number; cpu: number }> {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  await fn();
  const c = process.cpuUsage(c0);
  return { wall: (performance.now() - t0) / 1000, cpu: (c.user + c.system) / 1e6 };
}

export async function runClickHouseCsvBench({ calls = 1_000_000, runs = 3, beforeDir }: ClickHouseCsvOptions = {}): Promise<BenchRow[]> {
  ensureProductionBuild();
  process.env.LOG_LEVEL ??= "silent";
  const { startClickHouse } = await import("@/lib/clickhouse/test-clickhouse");
  const { migrateClickHouse, openClickHouse } = await import("@/lib/clickhouse");
  const { openDatabase } = await import("@/db/client");
  const { withApps } = await import("@/lib/analytics/engines/clickhouse/context");
  const { callsCsvQuery } = await import("@/lib/analytics/engines/clickhouse/reports/calls");
  const { callsCsvBytes } = await import("@/lib/analytics/engines/clickhouse/reports/calls-csv");
  const { CALL_RAW_COLUMNS } = await import("@/lib/analytics/csv-columns");
  const { csvRawStream } = await import("@/lib/export/csv");
  const { filters } = await import("@/lib/analytics/filters");
  const dir = mkdtempSync(path.join(tmpdir(), "callboard-bench-chcsv-"));
  const cluster = await startClickHouse({ shards: 2, parentDir: dir });
  const rows: BenchRow[] = [];
  const area = `calls CSV from ClickHouse, ${(calls / 1e6).toLocaleString("en")}M (2 local 18.16 shards)`;
  try {
    const database = "bench_csv";
    await migrateClickHouse(cluster.config(database));
    log(`clickhouse-csv: generating ${calls.toLocaleString("en")} calls…`);
    await generateV2Calls(cluster.servers, cluster.password, database, calls, log);
    const file = path.join(dir, "generated.db");
    const token = await sqliteForGenerated(file);
    const ch = openClickHouse(cluster.config(database));
    const db = openDatabase(file);
    try {
      const ctx = await withApps({ ch, db: () => db });
      const { query, apps } = callsCsvQuery(ctx, filters({ format: "csv" }), { appPks: "all" });
      const [{ n }] = await ch.rows<{ n: number }>(`SELECT count() AS n FROM (${query})`);
      log(`clickhouse-csv: ${n.toLocaleString("en")} live calls; where the time goes (${load()})…`);
      const steps: Array<[string, () => Promise<unknown>]> = [
        ["the query alone (FORMAT Null, on the first shard)", () => ch.command(`${query} FORMAT Null`)],
        ["+ its RowBinary bytes moved to this process", async () => {
          for await (const _ of ch.streamRowBinary(query)) void _;
        }],
        ["+ RowBinary decoded into CSV bytes (the engine's path now)", async () => {
          for await (const _ of callsCsvBytes(ch, query, apps, "UTC")) void _;
        }],
        ["before: JSONEachRow moved and parsed into row objects", async () => {
          for await (const _ of ch.stream(query)) void _;
        }],
        ["before: + arrays written by csvRawStream (the engine's path before)", async () => {
          async function* batches() {
            let batch: unknown[][] = [];
            for await (const r of ch.stream<Record<string, number | string | null>>(query)) {
              batch.push([apps.appId(r.appPk as number), r.sessionId, r.callType, r.callMode, r.callStatus, r.initiatorText, r.receiverText, r.receiverType, r.initiatedAt,
                r.startedAt, r.endedAt, r.startAt, r.hasRecording, (r.audioX1000 as number) / 1000, (r.videoX1000 as number) / 1000, (r.durationX1000 as number) / 1000,
                r.durationSeconds, r.totalParticipants]);
              if (batch.length >= 2048) {
                yield batch;
                batch = [];
              }
            }
            if (batch.length > 0) yield batch;
          }
          const reader = csvRawStream(batches(), CALL_RAW_COLUMNS).getReader();
          while (!(await reader.read()).done);
        }],
      ];
      for (const [name, fn] of steps) {
        // The slow path before is timed once (minutes at 10M); the others `runs` times.
        const times = name.startsWith("before") ? 1 : runs;
        const timings: Array<{ wall: number; cpu: number }> = [];
        for (let i = 0; i < times; i++) timings.push(await timed(fn));
        const s = median(timings.map((r) => r.wall));
        const cpu = median(timings.map((r) => r.cpu));
        log(`  ${name}: ${s.toFixed(2)} s (this process's CPU ${cpu.toFixed(2)} s)`);
        rows.push({ area, metric: `${name} (${times === 1 ? "one run" : `median of ${times}`}; ${load()})`, target: "", measured: `${s.toFixed(2)} s, ${rate(n, s)}; CPU here ${((cpu / n) * 1e6).toFixed(2)} µs a row` });
      }
    } finally {
      db.$client.close();
      await ch.close();
    }
    // Through the production server, A and B in turn when there is an A.
    const variants: Array<[string, string]> = [...(beforeDir ? [["before", path.resolve(beforeDir)] as [string, string]] : []), ["this code", process.cwd()]];
    const results = new Map<string, Array<{ rows: number; seconds: number; firstByteMs: number; cpuSeconds?: number; peakMb?: number }>>();
    for (let round = 0; round < runs; round++) {
      for (const [name, cwd] of variants) {
        const server = await startProductionServer({ AUTH_SECRET: SECRET, DATABASE_PATH: file, ...cluster.env(database) }, 600_000, cwd);
        try {
          const r = await csvRate(server.url, token, { serverPid: server.child.pid });
          const list = results.get(name) ?? [];
          list.push({ ...r, peakMb: peakRssMb(server.child.pid) });
          results.set(name, list);
          log(`  ${name}, round ${round + 1}: ${rate(r.rows, r.seconds)} (first byte ${r.firstByteMs.toFixed(0)} ms; ${load()})`);
        } finally {
          await server.stop();
        }
      }
    }
    for (const [name, list] of results) {
      const rates = list.map((r) => r.rows / r.seconds);
      const m = median(rates);
      const cpu = list.map((r) => (r.cpuSeconds ?? NaN) / r.rows * 1e6);
      rows.push({
        area,
        metric: `calls CSV through the production server (${name}), ${list[0].rows.toLocaleString("en")} rows: median of ${list.length} (first byte ${median(list.map((r) => r.firstByteMs)).toFixed(0)} ms; server CPU ${median(cpu).toFixed(1)} µs a row; peak RSS ${Math.max(...list.map((r) => r.peakMb ?? 0))} MB)`,
        target: ">= 100,000 rows/s",
        measured: `${Math.round(m).toLocaleString("en")} rows/s (${rates.map((x) => Math.round(x).toLocaleString("en")).join(", ")})`,
        ok: name === "this code" ? m >= 100_000 : undefined,
      });
    }
  } finally {
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}
