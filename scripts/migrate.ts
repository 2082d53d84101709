/** `npm run db:migrate`: applies pending migrations to DATABASE_PATH, and to ClickHouse when CLICKHOUSE_URL is set. */
import { env } from "@/lib/config/env";
import { loadDotEnv } from "@/lib/config/dotenv";
import { openDatabase } from "@/db/client";
import { clickHouseConfig, migrateClickHouse } from "@/lib/clickhouse";

loadDotEnv();
try {
  const config = env();
  const file = config.DATABASE_PATH;
  openDatabase(file, { backupBeforeMigration: config.MIGRATION_BACKUP === "on" }).$client.close();
  console.log(`Migrated ${file}`);
  const ch = clickHouseConfig();
  if (ch) {
    const report = await migrateClickHouse(ch);
    const applied = report.applied.length === 0 ? "already up to date" : report.applied.map((a) => `${a.host}: ${String(a.id).padStart(4, "0")}_${a.name}`).join(", ");
    console.log(`Migrated ClickHouse ${report.hosts.join(", ")}${report.onCluster ? " (ON CLUSTER)" : ""}: ${applied}`);
  }
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
}
