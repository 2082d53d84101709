/**
 * `npm run db:migrate`: applies pending migrations to Callboard's state (the Postgres at
 * DATABASE_URL when it is set, else the SQLite file at DATABASE_PATH), and to ClickHouse
 * when CLICKHOUSE_URL is set. Safe beside servers starting at once (docs/decisions/0035).
 * Then moves a ClickHouse warehouse of schema v1 to v2, month by month
 * (lib/clickhouse/move-v2.ts: resumable, a count check per month, nothing to do once
 * moved), and flags the calls whose recording link is stored but not in their state
 * (calls_v2.has_link, ClickHouse migration 0007; lib/clickhouse/link-flags.ts: nothing
 * to do once flagged). `--no-progress` leaves out the progress bar (logs, CI).
 */
import { SingleBar, Presets } from "cli-progress";
import { env } from "@/lib/config/env";
import { loadDotEnv } from "@/lib/config/dotenv";
import { openDatabase } from "@/db/client";
import { migratePostgres } from "@/db/postgres/client";
import { clickhouse, clickHouseConfig, closeClickHouse, migrateClickHouse } from "@/lib/clickhouse";
import { appsWithLinks, flagAllLinkedCalls } from "@/lib/clickhouse/link-flags";
import { processWriterV2 } from "@/lib/clickhouse/writer-v2";
import { moveToV2, type MoveProgress } from "@/lib/clickhouse/move-v2";
import { parsePostgresConfig } from "@/lib/postgres/config";

loadDotEnv();
const progress = !process.argv.includes("--no-progress") && process.stdout.isTTY === true;
try {
  const config = env();
  if (config.DATABASE_URL !== undefined) {
    const postgres = parsePostgresConfig(config.DATABASE_URL);
    const report = await migratePostgres(postgres);
    console.log(`Migrated Postgres ${postgres.redacted}: ${report.applied.length === 0 ? "already up to date" : report.applied.join(", ")}`);
  } else {
    const file = config.DATABASE_PATH;
    openDatabase(file, { backupBeforeMigration: config.MIGRATION_BACKUP === "on" }).$client.close();
    console.log(`Migrated ${file}`);
  }
  const ch = clickHouseConfig();
  if (ch) {
    const report = await migrateClickHouse(ch);
    const applied = report.applied.length === 0 ? "already up to date" : report.applied.map((a) => `${a.host}: ${String(a.id).padStart(4, "0")}_${a.name}`).join(", ");
    console.log(`Migrated ClickHouse ${report.hosts.join(", ")}${report.onCluster ? " (ON CLUSTER)" : ""}: ${applied}`);
    let bar: SingleBar | undefined;
    let barHost = "";
    const onProgress = (p: MoveProgress) => {
      if (p.step === "checked" && !progress) console.log(`Moved ${p.host} ${p.month} to schema v2: ${p.calls ?? 0} calls, counts checked (${p.monthsDone}/${p.monthsTotal} months)`);
      if (!progress) return;
      if (barHost !== p.host) {
        bar?.stop();
        bar = new SingleBar({ format: ` v2 ${p.host} [{bar}] {value}/{total} months | {month} | {duration_formatted}`, hideCursor: true }, Presets.shades_classic);
        bar.start(p.monthsTotal, p.monthsDone, { month: p.month });
        barHost = p.host;
      }
      bar?.update(p.monthsDone, { month: `${p.month} ${p.step}` });
    };
    try {
      const moved = await moveToV2(ch, { onProgress, statementTimeoutMs: config.CLICKHOUSE_MOVE_STATEMENT_TIMEOUT_SECONDS * 1000 });
      bar?.stop();
      const calls = moved.moved.reduce((s, m) => s + m.calls, 0);
      console.log(
        moved.moved.length === 0
          ? `Schema v2: nothing to move${moved.skipped ? ` (${moved.skipped} months moved earlier)` : ""}`
          : `Schema v2: moved ${moved.moved.length} months, ${calls} calls, every count checked${moved.skipped ? ` (${moved.skipped} months moved earlier)` : ""}`,
      );
    } catch (err) {
      bar?.stop();
      throw err;
    }
    // Run before the servers write (as the move): the pass writes calls' states without the sync's lease.
    const client = clickhouse();
    try {
      const flagged = await flagAllLinkedCalls(await processWriterV2(), client, await appsWithLinks(client));
      console.log(`Link flags: ${flagged === 0 ? "every call with a recording link is flagged" : `${flagged} calls flagged`}`);
    } finally {
      await closeClickHouse();
    }
  }
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
}
