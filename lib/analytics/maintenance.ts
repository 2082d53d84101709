import type { Db } from "@/db/client";
import { rebuildStatements } from "./rollup-sql";

/** Recomputes every rollup from `calls` and `call_participants` in one transaction
 * (repair, and the reference the tests hold the triggers to). */
export function rebuildAnalyticsRollups(db: Db): void {
  const sqlite = db.$client;
  sqlite.transaction(() => {
    for (const s of rebuildStatements()) sqlite.exec(s);
  })();
}
