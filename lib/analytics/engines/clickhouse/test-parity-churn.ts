/**
 * Test support of the parity suite: the history schema v2's writers leave behind, written
 * into the signed rows of a warehouse the copy wrote in v2 (lib/clickhouse/writer-v2.ts), so
 * that every report must read cancel rows that no merge has collapsed yet. For each call
 * chosen, in separate inserts, as writers that replace states do:
 *   1. the cancel row of its live state S (version v);
 *   2. the cancel row of a passing state P (version v+1: started 40 days later, in another
 *      month, ended, of the other type, other minutes, without its participants' last row), landing BEFORE
 *      P itself — a retried or late insert;
 *   3. P;
 *   4. S again as version v+2 (the state it has in SQLite).
 * And calls deleted in v2: a ghost call's state, then its cancel rows alone (a delete).
 * The live states are what SQLite holds, so every answer must stay the in-memory engine's.
 */
import { stringLiteral, type ClickHouse } from "@/lib/clickhouse";
import { qualified, quoteIdentifier } from "@/lib/clickhouse/schema";
import { CALLS_V2, PARTICIPANTS_V2, SESSION_CODE_SQL } from "@/lib/clickhouse/schema-v2";

/** Columns of a table with some replaced by expressions (over the row read). */
function selectOf(columns: ReadonlyArray<readonly [string, string]>, overrides: Record<string, string>): { names: string; exprs: string } {
  return {
    names: columns.map(([n]) => quoteIdentifier(n)).join(", "),
    exprs: columns.map(([n]) => (n in overrides ? `${overrides[n]} AS ${quoteIdentifier(`x_${n}`)}` : quoteIdentifier(n))).join(", "),
  };
}

const MOVED = "start_at + 40 * 86400";

/** Which rows a step reads: the same calls' keys over calls_v2 (session_id) and over participants_v2 (session_code). */
interface Keys {
  calls: string;
  participants: string;
}

/** One step: the live rows of `keys` (sign = 1 and version = the live one) written again with `overrides`, calls then participants. */
async function step(ch: ClickHouse, keys: Keys, calls: Record<string, string>, participants: Record<string, string>, participantFilter = "1"): Promise<void> {
  const db = ch.placement.database;
  for (const [table, overrides, extra, where] of [[CALLS_V2, calls, "1", keys.calls], [PARTICIPANTS_V2, participants, participantFilter, keys.participants]] as const) {
    const s = selectOf(table.columns, overrides);
    await ch.command(`INSERT INTO ${qualified(db, table.name)} (${s.names}) SELECT ${s.exprs} FROM ${qualified(db, table.name)} WHERE sign = 1 AND ${where} AND ${extra}`);
  }
}

export interface Churned {
  /** Calls whose live state was cancelled and written again, with a passing state in another month between. */
  changed: Array<{ appPk: number; sessionId: string }>;
  /** Sessions of calls that exist in v2 only as a state and its cancel rows (deleted). */
  deleted: Array<{ appPk: number; sessionId: string }>;
}

/** Writes the churn into `ch` (v2 written) for the calls `where` selects (SQL over calls_v2). */
export async function churnV2(ch: ClickHouse, where: string): Promise<Churned> {
  const db = ch.placement.database;
  const picked = await ch.rows<{ appPk: number; sessionId: string; version: number }>(
    // The live states only: a state the copy already replaced may still have its +1 row
    // beside its cancel row (not merged yet), and churning it would write it back alive.
    `SELECT app_pk AS appPk, session_id AS sessionId, version FROM ${qualified(db, CALLS_V2.name)} WHERE ${where}
     GROUP BY app_pk, session_id, version HAVING sum(sign) > 0 ORDER BY app_pk, session_id`,
  );
  if (picked.length === 0) throw new Error("no call to churn");
  const keyOf = (rows: Array<{ appPk: number; sessionId: string; version: number }>): Keys => ({
    calls: `(app_pk, session_id, version) IN (${rows.map((r) => `(${r.appPk}, ${stringLiteral(r.sessionId)}, ${r.version})`).join(", ")})`,
    participants: `(app_pk, session_code, version) IN (${rows.map((r) => `(${r.appPk}, ${SESSION_CODE_SQL(stringLiteral(r.sessionId))}, ${r.version})`).join(", ")})`,
  });
  const live = keyOf(picked);
  // P's type is the other one, on its participant rows too (as a writer copies it): a report filtered by type must not count the call under either until P is cancelled.
  const otherType = "if(type = 'audio', 'video', 'audio')";
  const passing = { version: "version + 1", start_at: MOVED, status: "'ended'", type: otherType, total_audio_minutes_x1000: "total_audio_minutes_x1000 + 7777" };
  const passingParticipants = { version: "version + 1", start_at: MOVED, status: "'ended'", type: otherType };
  // 1. S cancelled.
  await step(ch, live, { sign: "toInt8(-1)" }, { sign: "toInt8(-1)" });
  // 2. P's cancel row before P (P: S moved a month on, changed, its last participant row gone).
  const lastSeq = `(app_pk, session_code, seq) GLOBAL NOT IN (SELECT app_pk, session_code, max(seq) FROM ${qualified(db, PARTICIPANTS_V2.name)} WHERE ${live.participants} GROUP BY app_pk, session_code)`;
  await step(ch, live, { ...passing, sign: "toInt8(-1)" }, { ...passingParticipants, sign: "toInt8(-1)" }, lastSeq);
  // 3. P.
  await step(ch, live, passing, passingParticipants, lastSeq);
  // 4. S again, newer.
  await step(ch, live, { version: "version + 2" }, { version: "version + 2" });
  // A deleted call: a ghost of the first call picked, written, then its cancel rows alone.
  const first = picked[0];
  const ghost = { appPk: first.appPk, sessionId: `ghost-${first.sessionId}`, version: first.version + 2 };
  const ghostId = stringLiteral(ghost.sessionId);
  await step(ch, keyOf([{ ...first, version: first.version + 2 }]), { session_id: ghostId }, { session_code: SESSION_CODE_SQL(ghostId) });
  await step(ch, keyOf([ghost]), { sign: "toInt8(-1)" }, { sign: "toInt8(-1)" });
  return {
    changed: picked.map(({ appPk, sessionId }) => ({ appPk, sessionId })),
    deleted: [{ appPk: ghost.appPk, sessionId: ghost.sessionId }],
  };
}

/**
 * Stops merges of the v2 tables on each server (its local tables), so that the cancel rows
 * written stay uncollapsed while the suite reads (a merge would change no answer, but would
 * leave less to prove).
 */
export async function holdMerges(servers: ClickHouse[], localTables: string[]): Promise<void> {
  for (const s of servers) for (const t of localTables) await s.command(`SYSTEM STOP MERGES ${qualified(s.placement.database, t)}`);
}
