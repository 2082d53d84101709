/**
 * `npm run warehouse -- copy --to clickhouse`: copies the SQLite warehouse's facts (calls
 * with their participants, recordings, webhook deliveries, event counts) into the
 * ClickHouse named by CLICKHOUSE_URL (and CLICKHOUSE_CLUSTER). Resumable, idempotent,
 * with a progress bar and a final count check that fails loudly (lib/clickhouse/copy.ts).
 */
import { Command, Option } from "commander";
import { MultiBar, Presets, type SingleBar } from "cli-progress";
import { db } from "@/db";
import { loadDotEnv } from "@/lib/config/dotenv";
import { runCli, printTable } from "@/lib/cli/run";
import { clickHouseConfig, closeClickHouse, migrateClickHouse, openClickHouse } from "@/lib/clickhouse";
import { CopyMismatchError, copyToClickHouse, type CopyProgress } from "@/lib/clickhouse/copy";

loadDotEnv();

const program = new Command("warehouse").description("Move the warehouse's facts").exitOverride();

program
  .command("copy")
  .description("copy the SQLite warehouse's facts into ClickHouse (resumable: run it again after an interruption)")
  .addOption(new Option("--to <engine>", "where to copy").choices(["clickhouse"]).makeOptionMandatory())
  .option("--batch-size <rows>", "rows per insert", "2000")
  .option("--restart", "ignore the checkpoints and copy everything again (never double counts)")
  .option("--no-progress", "no progress bar (logs, CI)")
  .action(async (o: { to: "clickhouse"; batchSize: string; restart?: boolean; progress: boolean }) => {
    const config = clickHouseConfig();
    if (!config) throw new Error("CLICKHOUSE_URL is not set: it names the ClickHouse to copy into (http(s)://user:password@host:port/database)");
    const batchSize = Number(o.batchSize);
    if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 100_000) throw new Error("--batch-size must be a whole number from 1 to 100000");
    const migrated = await migrateClickHouse(config);
    console.log(`Copying ${process.env.DATABASE_PATH ?? "the warehouse"} into ${migrated.hosts.join(", ")}${config.cluster ? ` (cluster ${config.cluster})` : ""}`);
    const ch = openClickHouse(config);
    const bars = o.progress ? new MultiBar({ format: " {table} [{bar}] {percentage}% | {value}/{total} rows | {duration_formatted}", hideCursor: true, clearOnComplete: false }, Presets.shades_classic) : undefined;
    const byTable = new Map<string, SingleBar>();
    const onProgress = (p: CopyProgress) => {
      if (!bars) return;
      let bar = byTable.get(p.table);
      if (!bar) byTable.set(p.table, (bar = bars.create(p.total, 0, { table: p.table.padEnd(18) })));
      bar.setTotal(p.total);
      bar.update(p.done);
    };
    const abort = new AbortController();
    const stop = () => abort.abort();
    process.once("SIGINT", stop);
    try {
      const counts = await copyToClickHouse(db(), ch, { batchSize, restart: o.restart, onProgress, signal: abort.signal });
      bars?.stop();
      printTable(counts.map((c) => ({ table: c.table, copied: c.copied, sqlite: c.sqlite, clickhouse: c.clickhouse, check: "ok" })));
      console.log("Count check passed: ClickHouse holds every row of the SQLite warehouse.");
    } catch (err) {
      bars?.stop();
      if (err instanceof CopyMismatchError) {
        printTable(err.counts.map((c) => ({ table: c.table, copied: c.copied, sqlite: c.sqlite, clickhouse: c.clickhouse, check: c.sqlite === c.clickhouse ? "ok" : "MISMATCH" })));
      }
      throw err;
    } finally {
      process.off("SIGINT", stop);
      await ch.close();
      await closeClickHouse();
    }
  });

void runCli(async () => {
  await program.parseAsync(process.argv);
});
