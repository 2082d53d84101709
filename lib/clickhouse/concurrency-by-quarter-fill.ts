import type { ClickHouse } from "./client";
import { localName, qualified, type Placement } from "./schema";
import { CALLS_V2, CONCURRENCY_BY_QUARTER, concurrencyByQuarterSelect } from "./schema-v2";

/**
 * Fills concurrency_by_quarter from the signed call rows on one host (ClickHouse migration
 * 0011), for a warehouse whose calls were stored before the table and its view existed.
 * Each host's view sums that host's call rows, so each host fills its own local table
 * from its own rows.
 *
 * One call start month (the table's partition) at a time: the month is dropped from the
 * pre-aggregate and summed again from calls_v2 with the view's own SELECT, then
 * checkpointed on the host. Killed anywhere, the next run redoes the months not
 * checkpointed (dropping first what a killed INSERT may have written). The view exists
 * before the fill starts, so rows a writer inserts into a month while it is filled could be
 * counted twice (by the view and the fill's read) or dropped with the partition: run it
 * from `npm run db:migrate` with the writers stopped, as the fills of 0008 and 0010.
 */

export const CONCURRENCY_FILL_CHECKPOINTS_TABLE = "concurrency_by_quarter_fill_checkpoints";

export interface FilledMonth {
  month: number;
  rows: number;
}

/** Fills every start month of this host's call rows not yet checkpointed; returns those filled by this run. */
export async function fillConcurrencyByQuarter(ch: ClickHouse, p: Placement): Promise<FilledMonth[]> {
  const source = qualified(p.database, localName(p, CALLS_V2.name));
  const target = qualified(p.database, localName(p, CONCURRENCY_BY_QUARTER.name));
  const checkpoints = qualified(p.database, CONCURRENCY_FILL_CHECKPOINTS_TABLE);
  const stored = (await ch.rows<{ month: number }>(`SELECT DISTINCT toYYYYMM(start_at) AS month FROM ${source} ORDER BY month`)).map((r) => Number(r.month));
  const filled: FilledMonth[] = [];
  // A new warehouse has nothing to fill.
  if (stored.length === 0) return filled;
  await ch.command(`CREATE TABLE IF NOT EXISTS ${checkpoints} (month UInt32, rows UInt64, done_ms UInt64) ENGINE = MergeTree ORDER BY month`);
  const done = new Set((await ch.rows<{ month: number }>(`SELECT DISTINCT month FROM ${checkpoints}`)).map((r) => Number(r.month)));
  const columns = CONCURRENCY_BY_QUARTER.columns.map(([n]) => n).join(", ");
  for (const month of stored.filter((m) => !done.has(m))) {
    await ch.command(`ALTER TABLE ${target} DROP PARTITION ${month}`);
    await ch.command(`INSERT INTO ${target} (${columns}) ${concurrencyByQuarterSelect(source, `toYYYYMM(start_at) = ${month}`)}`);
    const [r] = await ch.rows<{ n: number }>(`SELECT count() AS n FROM ${target} WHERE toYYYYMM(month) = ${month}`);
    const rows = Number(r?.n ?? 0);
    await ch.command(`INSERT INTO ${checkpoints} (month, rows, done_ms) VALUES (${month}, ${rows}, ${Date.now()})`);
    filled.push({ month, rows });
  }
  return filled;
}
