import type { ClickHouse } from "./client";
import { localName, qualified, type Placement, type TableSpec } from "./schema";
import { CLOSED_COLUMNS, PARTICIPANTS_BY_MONTH, PARTICIPANTS_BY_MONTH_DIMS, PARTICIPANTS_V2, participantsByMonthSelect } from "./schema-v2";

/**
 * Rebuilds participants_by_month from the signed participant rows on one host (ClickHouse
 * migration 0010), for a warehouse whose rows were stored before the table was recreated
 * with joined / unanswered per distinct call. Each host's view sums that host's
 * participant rows, so each host rebuilds its own local table from its own rows.
 *
 * One start month (partition) at a time: the month is dropped from the pre-aggregate and
 * summed again from participants_v2 with the view's own SELECT, then checkpointed on the
 * host. Killed anywhere, the next run redoes the months not checkpointed (dropping first
 * what a killed INSERT may have written). Rows inserted into a month while it is rebuilt
 * could be counted twice or not at all, so it runs from `npm run db:migrate` with the
 * writers stopped, as the fill of 0008 and the move from v1.
 */

export const BY_MONTH_FILL_CHECKPOINTS_TABLE = "participants_by_month_fill_checkpoints";

export interface RebuiltMonth {
  month: number;
  rows: number;
}

/** The checkpoints of migration 0012's fill of participants_by_month_dims (the same steps, its own months). */
export const BY_MONTH_DIMS_FILL_CHECKPOINTS_TABLE = "participants_by_month_dims_fill_checkpoints";

/** Rebuilds every month of this host's participant rows not yet checkpointed; returns those rebuilt by this run. */
export function rebuildParticipantsByMonth(ch: ClickHouse, p: Placement): Promise<RebuiltMonth[]> {
  return rebuildMonthly(ch, p, PARTICIPANTS_BY_MONTH, [], BY_MONTH_FILL_CHECKPOINTS_TABLE);
}

/** The same for participants_by_month_dims (migration 0012): its months summed per the call's closed sets too. */
export function fillParticipantsByMonthDims(ch: ClickHouse, p: Placement): Promise<RebuiltMonth[]> {
  return rebuildMonthly(ch, p, PARTICIPANTS_BY_MONTH_DIMS, CLOSED_COLUMNS.map(([n]) => n), BY_MONTH_DIMS_FILL_CHECKPOINTS_TABLE);
}

async function rebuildMonthly(ch: ClickHouse, p: Placement, table: TableSpec, dimensions: readonly string[], checkpointsTable: string): Promise<RebuiltMonth[]> {
  const source = qualified(p.database, localName(p, PARTICIPANTS_V2.name));
  const target = qualified(p.database, localName(p, table.name));
  const checkpoints = qualified(p.database, checkpointsTable);
  const stored = (await ch.rows<{ month: number }>(`SELECT DISTINCT toYYYYMM(start_at) AS month FROM ${source} ORDER BY month`)).map((r) => Number(r.month));
  const rebuilt: RebuiltMonth[] = [];
  // A new warehouse (or one without participants) has nothing to rebuild.
  if (stored.length === 0) return rebuilt;
  await ch.command(`CREATE TABLE IF NOT EXISTS ${checkpoints} (month UInt32, rows UInt64, done_ms UInt64) ENGINE = MergeTree ORDER BY month`);
  const done = new Set((await ch.rows<{ month: number }>(`SELECT DISTINCT month FROM ${checkpoints}`)).map((r) => Number(r.month)));
  // The view's SELECT names its columns in its own order: list them so.
  const columns = ["app_pk", "uid_code", "month", ...dimensions, ...PARTICIPANTS_BY_MONTH.columns.map(([n]) => n).filter((n) => !["app_pk", "uid_code", "month"].includes(n))].join(", ");
  for (const month of stored.filter((m) => !done.has(m))) {
    await ch.command(`ALTER TABLE ${target} DROP PARTITION ${month}`);
    await ch.command(`INSERT INTO ${target} (${columns}) ${participantsByMonthSelect(source, `toYYYYMM(start_at) = ${month}`, dimensions)}`);
    const [r] = await ch.rows<{ n: number }>(`SELECT count() AS n FROM ${target} WHERE toYYYYMM(month) = ${month}`);
    const rows = Number(r?.n ?? 0);
    await ch.command(`INSERT INTO ${checkpoints} (month, rows, done_ms) VALUES (${month}, ${rows}, ${Date.now()})`);
    rebuilt.push({ month, rows });
  }
  return rebuilt;
}
