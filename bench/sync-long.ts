/**
 * Benchmark `--only sync-long` (issue 18): one backfill long enough to show what a short
 * one does not, with the rate and memory at each mark. The emulator and warehouse setup
 * is the sync bench's (sync-backfill.ts `withBenchBackfill`).
 */
import { statSync } from "node:fs";
import type { DataMixName } from "@/lib/emulator/mixes";
import type { BenchRow } from "./bench-row";
import { withBenchBackfill } from "./sync-backfill";

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
export async function measureLongBackfill({ calls = 10_000_000, mix = "platform" as DataMixName } = {}): Promise<LongBackfillResult> {
  return withBenchBackfill(calls, { mix, prerender: false }, undefined, async ({ db, app, file, emulatorStartMs, syncApp }) => {
    const marks: LongBackfillMark[] = [];
    const wanted = [...LONG_BACKFILL_MARKS.filter((m) => m < calls), calls];
    let peak = process.memoryUsage.rss();
    const sample = () => (peak = Math.max(peak, process.memoryUsage.rss()));
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
