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
 */
import { existsSync } from "node:fs";
import { Command, Option } from "commander";
import { MultiBar, Presets, type SingleBar } from "cli-progress";
import { getDb, openDatabase } from "@/db/client";
import { migratePostgres, openPostgres } from "@/db/postgres/client";
import { env } from "@/lib/config/env";
import { loadDotEnv } from "@/lib/config/dotenv";
import { parsePostgresConfig } from "@/lib/postgres/config";
import { copyStateToPostgres, StateCopyMismatchError } from "@/lib/postgres/copy";
import { runCli, printTable } from "@/lib/cli/run";
import { clickHouseConfig, closeClickHouse, migrateClickHouse, openClickHouse } from "@/lib/clickhouse";
import { CopyMismatchError, copyToClickHouse, type CopyProgress } from "@/lib/clickhouse/copy";

loadDotEnv();

const program = new Command("warehouse").description("Move the warehouse's facts").exitOverride();

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
    const bars = progressBars(o.progress);
    const abort = new AbortController();
    const stop = () => abort.abort();
    process.once("SIGINT", stop);
    try {
      const counts = await copyToClickHouse(getDb(env().DATABASE_PATH), ch, { batchSize, restart: o.restart, onProgress: (p: CopyProgress) => bars.update(p), signal: abort.signal });
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
      await ch.close();
      await closeClickHouse();
    }
  });

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
