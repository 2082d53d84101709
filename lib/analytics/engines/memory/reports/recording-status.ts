import { sql, type SQL } from "drizzle-orm";
import type { Db } from "@/db/client";
import type { Filters } from "../../../filters";
import { pageOf, type AwaitingRecordingRow, type Page, type RecordingFacts, type RecordingSummary } from "../../../report-types";
import { resolveApps, visibleApps, type Scope } from "../../../scope";
import { hasRunningHours } from "../../../running-hours";
import { hasCallFilters } from "./recordings";
import { and, appCondition, iterateRows, rawConditions, timeCondition } from "./sql";

/**
 * Two facts about a call's recording, kept apart because they often disagree: the
 * platform's `hasRecording` flag (from the Calls API) and a link received by a
 * `recording_generated` webhook. A flagged call has no link until that webhook arrives
 * (or never, when the app's webhook is not configured for it). Computed from SQLite:
 * flagged calls through their partial index (migration 0012), links from `recordings`.
 */

const noLink = sql.raw("NOT EXISTS (SELECT 1 FROM recordings r WHERE r.app_pk = c.app_pk AND r.session_id = c.session_id)");

/** Filters on calls (alias `c`), time on the call's start (with weekday/hour, the period bounds their hours instead). */
function callConditions(f: Filters, appPks: number[] | "all"): SQL {
  return and([...rawConditions(f, appPks), hasRunningHours(f) ? undefined : timeCondition(f.from, f.to)]);
}

export function getRecordingSummary(db: Db, f: Filters, scope: Scope): RecordingSummary {
  const appPks = resolveApps(db, f, scope);
  const where = callConditions(f, appPks);
  const flaggedRow = db.get<{ flagged: number; awaiting: number | null }>(sql`SELECT count(*) AS flagged, sum(${noLink}) AS awaiting
    FROM calls c INDEXED BY calls_platform_recording_idx WHERE c.platform_has_recording = 1 AND ${where}`);
  const linkedRow = db.get<{ withLink: number; notFlagged: number | null; links: number | null }>(sql`SELECT count(*) AS withLink,
      sum(c.platform_has_recording = 0) AS notFlagged, sum(g.n) AS links
    FROM (SELECT r.app_pk, r.session_id, count(*) AS n FROM recordings r WHERE ${and([appCondition("r.app_pk", appPks)])} GROUP BY r.app_pk, r.session_id) g
    JOIN calls c ON c.app_pk = g.app_pk AND c.session_id = g.session_id
    WHERE ${where}`);
  const unsynced = hasCallFilters(f)
    ? 0
    : (db.get<{ n: number }>(sql`SELECT count(*) AS n FROM recordings r
        WHERE ${and([appCondition("r.app_pk", appPks), timeCondition(f.from, f.to, "coalesce(r.start_time, r.received_ms / 1000)")])}
          AND NOT EXISTS (SELECT 1 FROM calls c WHERE c.app_pk = r.app_pk AND c.session_id = r.session_id)`)?.n ?? 0);
  return {
    flagged: flaggedRow?.flagged ?? 0,
    withLink: linkedRow?.withLink ?? 0,
    awaiting: flaggedRow?.awaiting ?? 0,
    linkNotFlagged: linkedRow?.notFlagged ?? 0,
    links: linkedRow?.links ?? 0,
    linksForUnsyncedCalls: unsynced,
  };
}

/** Flagged calls without a link, newest first (by the call's start, then pk). */
function awaitingQuery(db: Db, f: Filters, scope: Scope): SQL {
  return sql`SELECT c.app_pk AS appPk, c.session_id AS sessionId, c.type, c.mode, c.status, c.initiator, c.receiver,
      c.receiver_type AS receiverType, c.start_at AS startAt, c.ended_at AS endedAt, c.duration_seconds AS durationSeconds
    FROM calls c INDEXED BY calls_platform_recording_idx
    WHERE c.platform_has_recording = 1 AND ${callConditions(f, resolveApps(db, f, scope))} AND ${noLink}
    ORDER BY c.start_at DESC, c.pk DESC`;
}

type RawAwaiting = Omit<AwaitingRecordingRow, "app"> & { appPk: number };

function toRow(r: RawAwaiting, appIds: Map<number, string>): AwaitingRecordingRow {
  const { appPk, ...rest } = r;
  return { app: appIds.get(appPk) ?? String(appPk), ...rest };
}

export function getAwaitingRecordings(db: Db, f: Filters, scope: Scope): Page<AwaitingRecordingRow> {
  const q = awaitingQuery(db, f, scope);
  const appIds = new Map(visibleApps(db, scope).map((a) => [a.pk, a.appId]));
  const total = db.get<{ n: number }>(sql`SELECT count(*) AS n FROM (${q})`)?.n ?? 0;
  const data = db.all<RawAwaiting>(sql`${q} LIMIT ${f.perPage} OFFSET ${(f.page - 1) * f.perPage}`).map((r) => toRow(r, appIds));
  return pageOf(data, total, f);
}

export function iterateAwaitingRecordings(db: Db, f: Filters, scope: Scope): IterableIterator<AwaitingRecordingRow> {
  const appIds = new Map(visibleApps(db, scope).map((a) => [a.pk, a.appId]));
  const it = iterateRows<RawAwaiting>(db, awaitingQuery(db, f, scope));
  return (function* () {
    for (const r of it) yield toRow(r, appIds);
  })();
}

/**
 * The calls list's rows with their recording facts (one indexed lookup per row of the
 * page): `recording` says what the platform flags and what was delivered, where the
 * row's `hasRecording` (what the filter uses) is either.
 */
export function withRecordingFacts<R extends { app: string; sessionId: string }>(db: Db, page: Page<R>, scope: Scope): Page<R & { recording: RecordingFacts }> {
  const pks = new Map(visibleApps(db, scope).map((a) => [a.appId, a.pk]));
  const keys = page.data.map((r) => [pks.get(r.app) ?? 0, r.sessionId]);
  const facts = new Map<string, RecordingFacts>();
  if (keys.length > 0) {
    const rows = db.all<{ appPk: number; sessionId: string; flagged: number; links: number }>(sql`SELECT c.app_pk AS appPk, c.session_id AS sessionId,
        c.platform_has_recording AS flagged, (SELECT count(*) FROM recordings r WHERE r.app_pk = c.app_pk AND r.session_id = c.session_id) AS links
      FROM json_each(${JSON.stringify(keys)}) j JOIN calls c ON c.app_pk = j.value ->> 0 AND c.session_id = j.value ->> 1`);
    for (const r of rows) facts.set(`${r.appPk}\u0000${r.sessionId}`, { flagged: r.flagged !== 0, links: r.links });
  }
  return {
    ...page,
    data: page.data.map((r) => ({ ...r, recording: facts.get(`${pks.get(r.app) ?? 0}\u0000${r.sessionId}`) ?? { flagged: false, links: 0 } })),
  };
}
