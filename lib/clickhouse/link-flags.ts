import type { ClickHouse } from "./client";
import { localName, qualified, RECORDINGS } from "./schema";
import { CALL_RAW, CALLS_V2 } from "./schema-v2";
import { raw, sql } from "./sql";
import type { CallChangeV2, CallWriterV2 } from "./writer-v2";

/**
 * The link flag of calls whose recording link arrived after their state was written
 * (docs/decisions/0034-clickhouse-schema-v2.md, "A stored link flag (session 16)").
 *
 * `calls_v2.has_link` is set by the writer of each state from the links stored when it
 * writes (writer-v2.ts `linked`). A link stored later — the forwarder copying a
 * `recording_generated` webhook, the copy's recordings, a warehouse migrated to 0007 —
 * changes no state by itself, so this pass writes the change of each such call through
 * CallWriterV2: the cancel row of the state without the flag and the same state with it,
 * one version higher (the copy skips a version not above the stored one as a replay, so
 * the smallest step keeps the copy's later changes, stamped with SQLite's updated_ms, above
 * it). The writer is exactly once (a pass killed anywhere is completed by the next lookup
 * of the call, which this pass starts with), and one writer per app at a time: the caller
 * holds the app's sync lease (the forwarder) or runs alone (the copy, `npm run db:migrate`).
 *
 * Idempotent: a call already flagged, deleted or never written is left alone, so the pass
 * may run again for the same links at any time.
 */

/** Flags the live calls among `sessionIds` of app `appPk` that have a link and no flag. Returns how many were changed. */
export async function flagLinkedCalls(writer: CallWriterV2, ch: ClickHouse, appPk: number, sessionIds: readonly string[]): Promise<number> {
  const ids = [...new Set(sessionIds)];
  if (ids.length === 0) return 0;
  let flagged = 0;
  for (let i = 0; i < ids.length; i += CHUNK) {
    const chunk = ids.slice(i, i + CHUNK);
    const stored = await writer.lookup(appPk, chunk);
    // First, every change among them whose rows did not all land (a pass or a sync killed mid-write):
    // the write below verifies only the calls it changes, and a call whose half-written change
    // already carries the flag is not changed again.
    await writer.complete(appPk, stored.values());
    const unflagged = [...stored.values()].filter((s) => s !== undefined && !s.deleted && s.state !== undefined && !s.state.hasLink);
    if (unflagged.length === 0) continue;
    const linked = await linkedKeys(ch, appPk, unflagged.map((s) => s!.sessionId));
    const toFlag = unflagged.filter((s) => linked.has(s!.sessionId));
    if (toFlag.length === 0) continue;
    const records = await rawRecords(ch, appPk, toFlag.map((s) => s!.sessionId));
    const changes: CallChangeV2[] = toFlag.map((s) => ({
      sessionId: s!.sessionId,
      version: s!.version + 1,
      // The same state (same source and content hash: the sync sees the call unchanged); the writer sets has_link from the links.
      next: { ...s!.state!, hasLink: true },
      raw: records.get(`${s!.sessionId}\u0000${s!.version}`) ?? null,
    }));
    flagged += (await writer.write(appPk, changes, stored)).written;
  }
  return flagged;
}

/** Keys per lookup and write: a sync page's worth. */
const CHUNK = 2_000;

/** The keys among `sessionIds` with a stored link (co-sharded: FINAL per shard). */
async function linkedKeys(ch: ClickHouse, appPk: number, sessionIds: readonly string[]): Promise<Set<string>> {
  const rows = await ch.rows<{ id: string }>(
    sql`SELECT DISTINCT session_id AS id FROM ${raw(qualified(ch.placement.database, RECORDINGS.name))} FINAL
      WHERE app_pk = ${appPk} AND session_id IN ${sessionIds} AND deleted = 0`.text,
  );
  return new Set(rows.map((r) => String(r.id)));
}

/** The platform's record of each state (call_raw.raw, by session and version): the flagged state keeps it. */
async function rawRecords(ch: ClickHouse, appPk: number, sessionIds: readonly string[]): Promise<Map<string, string | null>> {
  const rows = await ch.rows<{ id: string; version: string | number; raw: string | null }>(
    sql`SELECT session_id AS id, version, raw FROM ${raw(qualified(ch.placement.database, CALL_RAW.name))}
      WHERE app_pk = ${appPk} AND session_id IN ${sessionIds}`.text,
  );
  return new Map(rows.map((r) => [`${r.id}\u0000${Number(r.version)}`, r.raw]));
}

/**
 * The live calls of app `appPk` with a link and no flag: what a warehouse migrated to 0007
 * (its rows stored with has_link = 0) has to flag, read once from the signed rows (a
 * state's +1 row and its cancel row sum to 0, so `sum(sign) > 0` keeps the live ones).
 */
export async function unflaggedLinkedCalls(ch: ClickHouse, appPk: number): Promise<string[]> {
  const t = (name: string) => raw(qualified(ch.placement.database, name));
  // The shard's own recordings (co-sharded with the calls): an IN over the Distributed table inside a distributed read is refused.
  const rows = await ch.rows<{ id: string }>(
    sql`SELECT session_id AS id FROM ${t(CALLS_V2.name)}
      WHERE app_pk = ${appPk} AND has_link = 0
        AND session_id IN (SELECT session_id FROM ${t(localName(ch.placement, RECORDINGS.name))} FINAL WHERE app_pk = ${appPk} AND deleted = 0)
      GROUP BY session_id HAVING sum(sign) > 0`.text,
  );
  return rows.map((r) => String(r.id));
}

/**
 * Flags every call of these apps that has a link and no flag (`npm run db:migrate` after
 * migration 0007; run again, it finds nothing left). Resumable: each chunk is written
 * whole or completed by the next run's lookup.
 */
export async function flagAllLinkedCalls(writer: CallWriterV2, ch: ClickHouse, appPks: readonly number[], onProgress?: (p: { appPk: number; flagged: number }) => void): Promise<number> {
  let total = 0;
  for (const appPk of appPks) {
    const flagged = await flagLinkedCalls(writer, ch, appPk, await unflaggedLinkedCalls(ch, appPk));
    onProgress?.({ appPk, flagged });
    total += flagged;
  }
  return total;
}

/** The apps with a stored link: the ones flagAllLinkedCalls has to look at. */
export async function appsWithLinks(ch: ClickHouse): Promise<number[]> {
  const rows = await ch.rows<{ pk: number }>(`SELECT DISTINCT app_pk AS pk FROM ${qualified(ch.placement.database, RECORDINGS.name)} WHERE deleted = 0 ORDER BY pk`);
  return rows.map((r) => Number(r.pk));
}
