/**
 * `npm run warehouse -- copy --to clickhouse`: copies the SQLite warehouse's facts (calls
 * with their participants, recordings, webhook deliveries, event counts) into the
 * ClickHouse named by CLICKHOUSE_URL (and CLICKHOUSE_CLUSTER). Resumable, idempotent,
 * with a progress bar and a final count check that fails loudly (lib/clickhouse/copy.ts).
 *
 * `npm run warehouse -- copy --to postgres`: copies Callboard's own state (users, apps
 * with their encrypted secrets, tokens, audit, rules, sheets, statements, the inbox's
 * backlog…) from the SQLite file at DATABASE_PATH into the Postgres at DATABASE_URL.
 * Resumable, with a count check (lib/postgres/copy.ts).
 *
 * `npm run warehouse -- backup FILE` / `restore FILE`: an online, checked copy of the SQLite
 * file while the server runs, and putting one back while nothing has the file open
 * (db/backup.ts, docs/decisions/0030-backups.md).
 */
import { existsSync, statSync } from "node:fs";
import { Command, Option } from "commander";
import { MultiBar, Presets, SingleBar } from "cli-progress";
import { backupWarehouse, restoreWarehouse } from "@/db/backup";
import { getDb, openDatabase } from "@/db/client";
import { migratePostgres, openPostgres } from "@/db/postgres/client";
import { env } from "@/lib/config/env";
import { loadDotEnv } from "@/lib/config/dotenv";
import { parsePostgresConfig } from "@/lib/postgres/config";
import { copyStateToPostgres, StateCopyMismatchError } from "@/lib/postgres/copy";
import { runCli, printTable } from "@/lib/cli/run";
import { clickHouseConfig, closeClickHouse, migrateClickHouse, openClickHouse } from "@/lib/clickhouse";
import { CopyMismatchError, copyToClickHouse, type CopyProgress } from "@/lib/clickhouse/copy";
import { CallWriterV2, openShardsV2 } from "@/lib/clickhouse/writer-v2";

loadDotEnv();

const program = new Command("warehouse").description("Back up, restore and move the warehouse").exitOverride();

/** Below this size a backup takes a moment: no bar. */
const PROGRESS_MIN_BYTES = 64 * 1024 * 1024;

program
  .command("backup")
  .description("an online, consistent copy of the warehouse (DATABASE_PATH) into FILE, checked with PRAGMA integrity_check; safe while the server runs and syncs")
  .argument("<file>", "the new backup file (never overwritten)")
  .option("--no-progress", "no progress bar (logs, CI)")
  .action(async (file: string, o: { progress: boolean }) => {
    const source = env().DATABASE_PATH;
    const large = statSync(source, { throwIfNoEntry: false })?.size ?? 0;
    const bar = o.progress && large >= PROGRESS_MIN_BYTES ? new SingleBarOf(" backup [{bar}] {percentage}% | {value}/{total} pages | {duration_formatted}") : undefined;
    try {
      const done = await backupWarehouse(source, file, (p) => bar?.show(p.donePages, p.totalPages));
      bar?.stop();
      console.log(`Backed up ${source} to ${file}: ${done.pages} pages, ${(done.bytes / 1024 / 1024).toFixed(1)} MB, integrity check ok.`);
      console.log("Keep AUTH_SECRET with it: the apps' API keys and webhook passwords in it are encrypted under that secret.");
    } catch (err) {
      bar?.stop();
      throw err;
    }
  });

program
  .command("restore")
  .description("put the backup FILE in place of the warehouse (DATABASE_PATH); refused while any process (the server, a sync) has the warehouse open")
  .argument("<file>", "a backup made by `warehouse backup`")
  .action((file: string) => {
    const target = env().DATABASE_PATH;
    const done = restoreWarehouse(file, target);
    console.log(`Restored ${file} to ${target}.${done.previous ? ` The warehouse it replaced is kept as ${done.previous}.` : ""}`);
    console.log("Start the server with the AUTH_SECRET the backup was made under, or the apps' secrets cannot be read.");
  });

program
  .command("copy")
  .description(
    "copy the SQLite warehouse's facts into ClickHouse, or Callboard's own state into Postgres (resumable: run it again after an interruption)",
  )
  .addOption(new Option("--to <engine>", "where to copy").choices(["clickhouse", "postgres"]).makeOptionMandatory())
  .option("--batch-size <rows>", "rows per insert", "2000")
  .option("--restart", "ignore the checkpoints and copy everything again (never double counts)")
  .option("--no-progress", "no progress bar (logs, CI)")
  .action(async (o: { to: "clickhouse" | "postgres"; batchSize: string; restart?: boolean; progress: boolean }) => {
    if (o.to === "postgres") return copyStateIntoPostgres(o);
    const config = clickHouseConfig();
    if (!config) throw new Error("CLICKHOUSE_URL is not set: it names the ClickHouse to copy into (http(s)://user:password@host:port/database)");
    const batchSize = Number(o.batchSize);
    if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 100_000) throw new Error("--batch-size must be a whole number from 1 to 100000");
    const migrated = await migrateClickHouse(config);
    console.log(`Copying ${process.env.DATABASE_PATH ?? "the warehouse"} into ${migrated.hosts.join(", ")}${config.cluster ? ` (cluster ${config.cluster})` : ""}`);
    const ch = openClickHouse(config);
    const shards = await openShardsV2(ch, config);
    const bars = progressBars(o.progress);
    const abort = new AbortController();
    const stop = () => abort.abort();
    process.once("SIGINT", stop);
    try {
      const writerV2 = new CallWriterV2(ch, shards);
      const counts = await copyToClickHouse(getDb(env().DATABASE_PATH), ch, { batchSize, restart: o.restart, onProgress: (p: CopyProgress) => bars.update(p), signal: abort.signal, writerV2 });
      bars.stop();
      printTable(counts.map((c) => ({ table: c.table, copied: c.copied, sqlite: c.sqlite, clickhouse: c.clickhouse, check: "ok" })));
      console.log("Count check passed: ClickHouse holds every row of the SQLite warehouse.");
    } catch (err) {
      bars.stop();
      if (err instanceof CopyMismatchError) {
        printTable(err.counts.map((c) => ({ table: c.table, copied: c.copied, sqlite: c.sqlite, clickhouse: c.clickhouse, check: c.sqlite === c.clickhouse ? "ok" : "MISMATCH" })));
      }
      throw err;
    } finally {
      process.off("SIGINT", stop);
      await Promise.all(shards.filter((s) => s.client !== ch).map((s) => s.client.close()));
      await ch.close();
      await closeClickHouse();
    }
  });

/** One bar, drawn only once it has a total. */
class SingleBarOf {
  private bar?: SingleBar;
  constructor(private readonly format: string) {}
  show(value: number, total: number): void {
    if (!this.bar) {
      this.bar = new SingleBar({ format: this.format, hideCursor: true }, Presets.shades_classic);
      this.bar.start(total, value);
    }
    this.bar.setTotal(total);
    this.bar.update(value);
  }
  stop(): void {
    this.bar?.stop();
  }
}

function progressBars(enabled: boolean): { update(p: { table: string; done: number; total: number }): void; stop(): void } {
  const bars = enabled ? new MultiBar({ format: " {table} [{bar}] {percentage}% | {value}/{total} rows | {duration_formatted}", hideCursor: true, clearOnComplete: false }, Presets.shades_classic) : undefined;
  const byTable = new Map<string, SingleBar>();
  return {
    update(p) {
      if (!bars) return;
      let bar = byTable.get(p.table);
      if (!bar) byTable.set(p.table, (bar = bars.create(p.total, 0, { table: p.table.padEnd(22) })));
      bar.setTotal(p.total);
      bar.update(p.done);
    },
    stop: () => bars?.stop(),
  };
}

async function copyStateIntoPostgres(o: { batchSize: string; restart?: boolean; progress: boolean }): Promise<void> {
  const config = env();
  if (config.DATABASE_URL === undefined) throw new Error("DATABASE_URL is not set: it names the Postgres to copy into (postgres://user:password@host:port/database)");
  const batchSize = Number(o.batchSize);
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 100_000) throw new Error("--batch-size must be a whole number from 1 to 100000");
  if (!existsSync(config.DATABASE_PATH)) throw new Error(`DATABASE_PATH names no file (${config.DATABASE_PATH}): there is no SQLite state to copy`);
  const postgres = parsePostgresConfig(config.DATABASE_URL);
  await migratePostgres(postgres);
  console.log(`Copying Callboard's state from ${config.DATABASE_PATH} into ${postgres.redacted}`);
  const sqlite = openDatabase(config.DATABASE_PATH);
  const target = openPostgres(postgres, { max: 2 });
  const bars = progressBars(o.progress);
  const abort = new AbortController();
  const stop = () => abort.abort();
  process.once("SIGINT", stop);
  try {
    const counts = await copyStateToPostgres(sqlite, target.$client, { batchSize, restart: o.restart, onProgress: (p) => bars.update(p), signal: abort.signal });
    bars.stop();
    printTable(counts.map((c) => ({ table: c.table, copied: c.copied, sqlite: c.sqlite, postgres: c.postgres, check: "ok" })));
    console.log("Count check passed: Postgres holds every row of Callboard's state in the SQLite file.");
  } catch (err) {
    bars.stop();
    if (err instanceof StateCopyMismatchError) {
      printTable(err.counts.map((c) => ({ table: c.table, copied: c.copied, sqlite: c.sqlite, postgres: c.postgres, check: c.sqlite === c.postgres ? "ok" : "MISMATCH" })));
    }
    throw err;
  } finally {
    process.off("SIGINT", stop);
    sqlite.$client.close();
    await target.$client.end();
  }
}

void runCli(async () => {
  await program.parseAsync(process.argv);
});
