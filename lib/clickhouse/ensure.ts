import { logger } from "@/lib/log/logger";
import { clickhouse, clickHouseConfig } from "./client";
import { backfillClientSessionsFromDeliveries } from "./client-sessions-backfill";
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
        fillClientSessions();
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

/**
 * client_sessions from the joins only ClickHouse still holds (client-sessions-backfill.ts),
 * in the background: reports do not wait for it; a failure is logged and tried again by
 * the next process.
 */
function fillClientSessions(): void {
  backfillClientSessionsFromDeliveries(clickhouse()).then(
    (n) => {
      if (n > 0) logger.info({ joins: n }, "ClickHouse client_sessions filled from stored joins");
    },
    (err: unknown) => logger.warn({ err: err instanceof Error ? err.message : String(err) }, "ClickHouse client_sessions fill failed; the next start tries again"),
  );
}
