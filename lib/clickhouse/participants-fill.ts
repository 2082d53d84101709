import type { ClickHouse } from "./client";
import { localName, qualified, quoteIdentifier, type Placement } from "./schema";
import { CALLS_V2, PARTICIPANT_CALL_COLUMNS, PARTICIPANTS_V2 } from "./schema-v2";

/**
 * Fills participants_v2's PARTICIPANT_CALL_COLUMNS (ClickHouse migration 0008) in the rows
 * stored before the columns existed, on one host (its local tables: a participant row is
 * on its call's shard, so the call it copies from is on the same host).
 *
 * A rebuild, one start month (partition) at a time: the month's rows are written again,
 * filled, into a staging table with the same structure (the flags from the rows of the
 * same call state and uid, the dimensions from the call state in calls_v2), the counts are
 * checked, and `ALTER TABLE … REPLACE PARTITION … FROM` swaps the month in whole (atomic per
 * partition; views are not fed, so participants_by_month, whose figures do not change, is
 * left as it is). Each month is then checkpointed on the host. Killed anywhere, the next run
 * redoes the months not checkpointed: filling a month twice gives the same rows.
 *
 * Rows that writers insert into a month between its staging and its swap would be lost, so
 * the month is rebuilt again if its row count moved meanwhile; like the move from v1, the
 * fill is meant to run from `npm run db:migrate` (or at start, before the sync writes).
 */

export const FILL_CHECKPOINTS_TABLE = "participants_fill_checkpoints";
const STAGING_TABLE = "participants_v2_fill";

export interface FilledMonth {
  month: number;
  rows: number;
}

/** How often a month is rebuilt when writers keep adding to it meanwhile, before giving up. */
const ATTEMPTS = 5;

const CALL_COLUMN_NAMES = new Set<string>(PARTICIPANT_CALL_COLUMNS.map(([n]) => n));
/** The call's dimensions copied (every added column but the two flags). */
const DIMENSIONS = PARTICIPANT_CALL_COLUMNS.map(([n]) => n).filter((n) => !n.startsWith("first_"));

/** The SELECT giving month `month`'s participant rows of `local` filled, in PARTICIPANTS_V2's column order. */
export function fillSelect(p: Placement, month: number): string {
  const local = qualified(p.database, localName(p, PARTICIPANTS_V2.name));
  const calls = qualified(p.database, localName(p, CALLS_V2.name));
  const inMonth = `toYYYYMM(start_at) = ${month}`;
  const base = PARTICIPANTS_V2.columns.map(([n]) => n).filter((n) => !CALL_COLUMN_NAMES.has(n));
  const q = (names: readonly string[]) => names.map(quoteIdentifier).join(", ");
  const out = PARTICIPANTS_V2.columns.map(([n]) => {
    if (n === "first_joined_of_uid") return "toUInt8(is_joined = 1 AND seq = seq_joined) AS first_joined_of_uid";
    if (n === "first_unanswered_of_uid") return "toUInt8(is_unanswered = 1 AND seq = seq_unanswered) AS first_unanswered_of_uid";
    return CALL_COLUMN_NAMES.has(n) ? `c_${n} AS ${quoteIdentifier(n)}` : quoteIdentifier(n);
  });
  // 18.16 joins one table per SELECT: the flags first (per call state, sign and uid: the
  // first joined / unanswered seq; a cancel row gets its state's), then the call state's dimensions.
  return `SELECT ${out.join(", ")} FROM (
  SELECT ${q(base)}, seq_joined, seq_unanswered FROM (SELECT ${q(base)} FROM ${local} WHERE ${inMonth})
  ANY LEFT JOIN (
    SELECT app_pk, session_code, version, sign, uid_code, minIf(seq, is_joined = 1) AS seq_joined, minIf(seq, is_unanswered = 1) AS seq_unanswered
    FROM ${local} WHERE ${inMonth} GROUP BY app_pk, session_code, version, sign, uid_code
  ) USING (app_pk, session_code, version, sign, uid_code)
) ANY LEFT JOIN (
  SELECT app_pk, session_code, version, ${DIMENSIONS.map((d) => `any(${quoteIdentifier(d)}) AS c_${d}`).join(", ")}
  FROM ${calls} WHERE ${inMonth} GROUP BY app_pk, session_code, version
) USING (app_pk, session_code, version)`;
}

/** Fills every month of this host's participant rows not yet checkpointed; returns those filled by this run. */
export async function fillParticipantCallColumns(ch: ClickHouse, p: Placement): Promise<FilledMonth[]> {
  const local = localName(p, PARTICIPANTS_V2.name);
  const table = qualified(p.database, local);
  const staging = qualified(p.database, STAGING_TABLE);
  const checkpoints = qualified(p.database, FILL_CHECKPOINTS_TABLE);
  const stored = (await ch.rows<{ month: number }>(`SELECT DISTINCT toYYYYMM(start_at) AS month FROM ${table} ORDER BY month`)).map((r) => Number(r.month));
  const filled: FilledMonth[] = [];
  // A new warehouse (or one without participants) has nothing to fill: no tables of the fill's own either.
  if (stored.length === 0) return filled;
  await ch.command(`CREATE TABLE IF NOT EXISTS ${checkpoints} (month UInt32, rows UInt64, done_ms UInt64) ENGINE = MergeTree ORDER BY month`);
  const done = new Set((await ch.rows<{ month: number }>(`SELECT DISTINCT month FROM ${checkpoints}`)).map((r) => Number(r.month)));
  const months = stored.filter((m) => !done.has(m));
  if (months.length === 0) return filled;
  // Same structure and engine; dropped first: a killed run may have left a half-written one.
  await ch.command(`DROP TABLE IF EXISTS ${staging}`);
  await ch.command(`CREATE TABLE ${staging} AS ${table}`);
  const countOf = async (t: string, month: number) =>
    Number((await ch.rows<{ n: number }>(`SELECT count() AS n FROM ${t} WHERE toYYYYMM(start_at) = ${month}`))[0]?.n ?? 0);
  for (const month of months) {
    let rows = -1;
    for (let attempt = 1; rows < 0; attempt++) {
      await ch.command(`TRUNCATE TABLE ${staging}`);
      const before = await countOf(table, month);
      await ch.command(`INSERT INTO ${staging} (${PARTICIPANTS_V2.columns.map(([n]) => quoteIdentifier(n)).join(", ")}) ${fillSelect(p, month)}`);
      const staged = await countOf(staging, month);
      if (staged !== before) throw new Error(`filling participants_v2 month ${month}: ${staged} rows staged for ${before} stored; run npm run db:migrate again`);
      if ((await countOf(table, month)) === before) {
        await ch.command(`ALTER TABLE ${table} REPLACE PARTITION ${month} FROM ${staging}`);
        rows = staged;
      } else if (attempt >= ATTEMPTS) {
        throw new Error(`filling participants_v2 month ${month}: rows keep arriving; stop the writers (the sync) and run npm run db:migrate again`);
      }
    }
    await ch.command(`INSERT INTO ${checkpoints} (month, rows, done_ms) VALUES (${month}, ${rows}, ${Date.now()})`);
    filled.push({ month, rows });
  }
  await ch.command(`DROP TABLE IF EXISTS ${staging}`);
  return filled;
}
