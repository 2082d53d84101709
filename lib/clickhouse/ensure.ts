import { logger } from "@/lib/log/logger";
import { clickHouseConfig } from "./client";
import { migrateClickHouse, type MigrationReport } from "./migrate";

const globalForSchema = globalThis as unknown as { callboardClickHouseSchema?: Promise<MigrationReport> };

/**
 * The ClickHouse schema, created and migrated once per process: at server start, and
 * again by the first user of ClickHouse if that failed (the server starts even while
 * ClickHouse is down; reports answer 503 until it is back). Resolves at once when
 * ClickHouse is not configured.
 */
export function ensureClickHouseSchema(): Promise<MigrationReport | undefined> {
  const c = clickHouseConfig();
  if (!c) return Promise.resolve(undefined);
  let pending = globalForSchema.callboardClickHouseSchema;
  if (!pending) {
    pending = migrateClickHouse(c).then(
      (report) => {
        if (report.applied.length > 0) logger.info({ clickhouse: c.redacted, applied: report.applied }, "ClickHouse schema migrated");
        return report;
      },
      (err: unknown) => {
        globalForSchema.callboardClickHouseSchema = undefined; // the next caller tries again
        throw err;
      },
    );
    globalForSchema.callboardClickHouseSchema = pending;
  }
  return pending;
}
