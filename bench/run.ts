/**
 * `npm run bench`: every benchmark, one table with the issues' targets beside the
 * measured figures. Builds its own data; never touches DATABASE_PATH.
 *
 *   npm run bench                      # everything at the issues' sizes (1M and 10M calls: long)
 *   npm run bench -- --only sync       # one part: sync | analytics | webhooks
 *   npm run bench -- --quick           # smaller sizes, for a smoke run
 *   npm run bench -- --only sync-long [--calls N]
 *                                      # one backfill of N calls (default 10M), the rate and
 *                                      # peak memory at 1M, 5M and 10M (never in the full run)
 */
import { Command } from "commander";

export interface BenchRow {
  area: string;
  metric: string;
  target: string;
  measured: string;
  /** Whether the measurement meets the target (undefined: informational). */
  ok?: boolean;
}

const program = new Command("bench")
  .option("--only <area>", "sync | analytics | webhooks | sync-long")
  .option("--quick", "smaller sizes (smoke run)")
  .option("--calls <n>", "override the call count of the sync and analytics benches")
  .parse(process.argv);
const opts = program.opts<{ only?: string; quick?: boolean; calls?: string }>();

function printTable(rows: BenchRow[]): void {
  const cols: Array<keyof BenchRow> = ["area", "metric", "target", "measured", "ok"];
  const cell = (r: BenchRow, c: keyof BenchRow) => (c === "ok" ? (r.ok === undefined ? "" : r.ok ? "yes" : "NO") : String(r[c] ?? ""));
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r, c).length)));
  const line = (vals: string[]) => "| " + vals.map((v, i) => v.padEnd(widths[i]!)).join(" | ") + " |";
  console.log(line(cols.map(String)));
  console.log("|" + widths.map((w) => "-".repeat(w + 2)).join("|") + "|");
  for (const r of rows) console.log(line(cols.map((c) => cell(r, c))));
}

async function main(): Promise<void> {
  process.env.NEXT_TELEMETRY_DISABLED = "1";
  const rows: BenchRow[] = [];
  const want = (area: string) => !opts.only || opts.only === area;
  const calls = opts.calls ? Number(opts.calls) : undefined;

  if (want("sync")) {
    const { runSyncBackfillBench } = await import("./sync-backfill");
    rows.push(...(await runSyncBackfillBench({ calls: calls ?? (opts.quick ? 100_000 : 1_000_000) })));
  }
  if (opts.only === "sync-long") {
    const { runLongBackfillBench } = await import("./sync-backfill");
    rows.push(...(await runLongBackfillBench({ calls: calls ?? 10_000_000 })));
  }
  if (want("analytics")) {
    const { runAnalyticsBench } = await import("./analytics");
    rows.push(...(await runAnalyticsBench({ sizes: calls ? [calls] : opts.quick ? [100_000] : [1_000_000, 10_000_000] })));
  }
  if (want("webhooks")) {
    const { runWebhookBench } = await import("./webhooks");
    rows.push(...(await runWebhookBench({ durationSeconds: opts.quick ? 5 : 30 })));
  }
  console.log("");
  printTable(rows);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
