/**
 * `npm run bench`: every benchmark, one table with the issues' targets beside the
 * measured figures. Builds its own data; never touches DATABASE_PATH.
 *
 *   npm run bench                      # everything at the issues' sizes (1M and 10M calls: long)
 *   npm run bench -- --only sync       # one part: sync | http | analytics | webhooks | webhook-kill | sync-long | clickhouse-sync | clickhouse | clickhouse-chdb | clickhouse-v2 | postgres | several-servers
 *   npm run bench -- --only webhook-kill --rounds 10   # SIGKILL the server under webhook load, count what was lost
 *   npm run bench -- --quick           # smaller sizes, for a smoke run
 *   npm run bench -- --only sync --mix platform,light-users   # some of the sync's data mixes
 *   npm run bench -- --only sync --mix platform --session-ids time,random
 *                                      # the sync's mixes with the upstream's session ids in
 *                                      # time order and/or random (UUIDs); the default run
 *                                      # has every mix in time order and platform random
 *   npm run bench -- --only http --calls 10000000 --mix platform --keep DIR
 *                                      # reports through the server; the warehouse kept in
 *                                      # DIR and reused by the next run with the same DIR
 *   npm run bench -- --only clickhouse-sync --mix platform,heavy-users [--prerender]
 *                                      # sync into a two-shard ClickHouse, per mix
 *   npm run bench -- --only clickhouse [--calls N] [--compare-calls M]
 *   npm run bench -- --only clickhouse-chdb [--calls N]  # every report over chdb (a current ClickHouse in-process)
 *                                      # on N calls (default 10M) generated into schema v2
 *   npm run bench -- --only clickhouse-csv [--calls N] [--before DIR]  # the calls CSV from ClickHouse: where the time goes, A/B through the server
 *   npm run bench -- --only clickhouse-v2 [--calls N]  # schema v2's queries and disk on two shards (not yet the engine's)
 *                                      # every report through the production server on a
 *                                      # two-shard ClickHouse: N calls (default 10M) generated
 *                                      # in ClickHouse; the in-memory engine, the copy command
 *                                      # and ClickHouse side by side on M (1M) synced calls
 *                                      # (0 skips either part)
 *   npm run bench -- --only postgres   # state checks on SQLite and on a loopback Postgres, the
 *                                      # Postgres webhook inbox's store rate from one and two pools
 *   npm run bench -- --only several-servers  # webhooks/s and a report's p95 through one
 *                                      # production server and through two over one Postgres
 *   npm run bench -- --only sync-long [--calls N]
 *                                      # one backfill of N calls (default 10M), the rate and
 *                                      # peak memory at 1M, 5M and 10M (never in the full run)
 */
import { Command } from "commander";
import { isDataMixName } from "@/lib/emulator/mixes";
import { isSessionIdOrder } from "@/lib/emulator/session-ids";
import type { BenchRow } from "./bench-row";


const program = new Command("bench")
  .option("--rounds <n>", "kill-and-restart rounds of the webhook kill test (default 5)")
  .option("--only <area>", "sync | http | analytics | webhooks | webhook-kill | sync-long | clickhouse-sync | clickhouse | clickhouse-chdb | clickhouse-csv | clickhouse-v2 | postgres | several-servers")
  .option("--quick", "smaller sizes (smoke run)")
  .option("--calls <n>", "override the call count of the sync and analytics benches")
  .option("--compare-calls <n>", "clickhouse: calls of the in-memory / copy / ClickHouse comparison (default 1M; 0 skips it)")
  .option("--keep <dir>", "http: keep each mix's warehouse in <dir> and reuse it on later runs")
  .option("--mix <names>", "sync, http, clickhouse-sync: data mixes to run, comma-separated (default: platform,heavy-users,light-users,big-meetings; clickhouse-sync: platform)")
  .option("--session-ids <orders>", "sync: the upstream's session ids, comma-separated: time | random (default: every mix in time order, and platform random)")
  .option("--before <dir>", "clickhouse-csv: a checkout of earlier code (with its build) to run beside this one, A/B")
  .option("--prerender", "clickhouse-sync: the emulator renders its pages before the sync (its CPU hidden; default: rendered as asked, like a real upstream)")
  .parse(process.argv);
const opts = program.opts<{ only?: string; quick?: boolean; calls?: string; compareCalls?: string; mix?: string; rounds?: string; keep?: string; prerender?: boolean; sessionIds?: string; before?: string }>();

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

  const mixes = opts.mix?.split(",").map((m) => m.trim());
  const unknown = mixes?.find((m) => !isDataMixName(m));
  if (unknown) throw new Error(`--mix: unknown mix "${unknown}"`);
  const sessionIds = opts.sessionIds?.split(",").map((m) => m.trim());
  const badOrder = sessionIds?.find((o) => !isSessionIdOrder(o));
  if (badOrder) throw new Error(`--session-ids: unknown order "${badOrder}" (time | random)`);
  if (want("sync")) {
    const { runSyncBackfillBench } = await import("./sync-backfill");
    rows.push(...(await runSyncBackfillBench({ calls: calls ?? (opts.quick ? 100_000 : 1_000_000), mixes: mixes?.filter(isDataMixName), sessionIds: sessionIds?.filter(isSessionIdOrder) })));
  }
  if (want("http")) {
    const { runHttpReportsBench } = await import("./http-reports");
    for (const n of calls ? [calls] : opts.quick ? [100_000] : [1_000_000, 10_000_000]) rows.push(...(await runHttpReportsBench({ calls: n, mixes: mixes?.length ? mixes.filter(isDataMixName) : undefined, keepDir: opts.keep })));
  }
  if (opts.only === "sync-long") {
    const { runLongBackfillBench } = await import("./sync-long");
    rows.push(...(await runLongBackfillBench({ calls: calls ?? 10_000_000 })));
  }
  if (want("analytics")) {
    const { runAnalyticsBench } = await import("./analytics");
    rows.push(...(await runAnalyticsBench({ sizes: calls ? [calls] : opts.quick ? [100_000] : [1_000_000, 10_000_000] })));
  }
  if (want("clickhouse-sync")) {
    const { runClickHouseSyncBench } = await import("./clickhouse-sync");
    rows.push(...(await runClickHouseSyncBench({ calls: calls ?? (opts.quick ? 100_000 : 1_000_000), mixes: mixes?.filter(isDataMixName), prerender: opts.prerender })));
  }
  if (want("clickhouse")) {
    const { runClickHouseReportsBench } = await import("./clickhouse-reports");
    const compareCalls = opts.compareCalls === undefined ? undefined : Number(opts.compareCalls);
    rows.push(...(await runClickHouseReportsBench({ calls: calls ?? (opts.quick ? 200_000 : 10_000_000), compareCalls: compareCalls ?? (opts.quick ? 100_000 : 1_000_000), runs: opts.quick ? 10 : 30 })));
  }
  if (want("clickhouse-chdb")) {
    const { runClickHouseChdbBench } = await import("./clickhouse-chdb");
    rows.push(...(await runClickHouseChdbBench({ calls: calls ?? (opts.quick ? 200_000 : 10_000_000), runs: opts.quick ? 5 : 15 })));
  }
  if (opts.only === "clickhouse-csv") {
    const { runClickHouseCsvBench } = await import("./clickhouse-csv");
    rows.push(...(await runClickHouseCsvBench({ calls: calls ?? (opts.quick ? 200_000 : 1_000_000), runs: 3, beforeDir: opts.before })));
  }
  if (opts.only === "clickhouse-v2") {
    const { runClickHouseV2Bench } = await import("./clickhouse-v2");
    rows.push(...(await runClickHouseV2Bench({ calls: calls ?? (opts.quick ? 200_000 : 10_000_000), runs: opts.quick ? 5 : 15 })));
  }
  if (want("webhooks")) {
    const { runWebhookBench } = await import("./webhooks");
    rows.push(...(await runWebhookBench({ durationSeconds: opts.quick ? 5 : 30 })));
  }
  if (want("webhook-kill")) {
    const { runWebhookKillBench } = await import("./webhook-kill");
    rows.push(...(await runWebhookKillBench({ rounds: opts.rounds ? Number(opts.rounds) : opts.quick ? 2 : 5 })));
  }
  if (want("several-servers")) {
    const { runSeveralServersBench } = await import("./several-servers");
    rows.push(...(await runSeveralServersBench({ seconds: opts.quick ? 5 : 20, runs: opts.quick ? 20 : 60, checkRounds: opts.quick ? 2_000 : 10_000 })));
  }
  if (want("postgres")) {
    const { runStateInPostgresBench } = await import("./state-in-postgres");
    rows.push(...(await runStateInPostgresBench({ rounds: opts.quick ? 2_000 : 10_000, deliveries: opts.quick ? 5_000 : 20_000 })));
  }
  console.log("");
  printTable(rows);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
