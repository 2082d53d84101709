import { sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import type { Filters } from "../../../filters";
import { hasRunningHours } from "../../../running-hours";
import { and, appCondition, iterateRows, rawConditions, timeCondition } from "./sql";
import { resolveApps, visibleApps, type Scope } from "../../../scope";
import { pageOf, type Page, type RecordingRow } from "../../../report-types";


export function hasCallFilters(f: Filters): boolean {
  return f.type !== undefined || f.mode !== undefined || f.status !== undefined || f.receiverType !== undefined ||
    f.hasRecording !== undefined || f.participantsCount !== undefined || f.uid !== undefined || hasRunningHours(f);
}

/** Recordings, newest first (by startTime, else arrival second; ties: latest received,
 * then app, session id and URL in bytes, newest first — an order ClickHouse computes too,
 * decision 0014 §10). `from`/`to` apply to the recording's startTime; call filters
 * (type, uid, …) keep only recordings whose call is synced and matches. */
function recordingsQuery(db: Db, f: Filters, scope: Scope) {
  const appPks = resolveApps(db, f, scope);
  const callFilter = hasCallFilters(f) ? sql`c.pk IS NOT NULL AND ${and(rawConditions({ ...f, from: undefined, to: undefined }, appPks))}` : undefined;
  return sql`SELECT r.app_pk AS appPk, r.session_id AS sessionId, r.recording_url AS recordingUrl, r.recording_date AS recordingDate,
      r.duration, r.start_time AS startTime, r.received_ms AS receivedMs, c.pk IS NOT NULL AS callKnown, c.type AS callType,
      c.start_at AS callStartAt
    FROM recordings r LEFT JOIN calls c ON c.app_pk = r.app_pk AND c.session_id = r.session_id
    WHERE ${and([appCondition("r.app_pk", appPks), timeCondition(f.from, f.to, "coalesce(r.start_time, r.received_ms / 1000)"), callFilter])}
    ORDER BY coalesce(r.start_time, r.received_ms / 1000) DESC, r.received_ms DESC, r.app_pk DESC, r.session_id DESC, r.recording_url DESC, r.pk DESC`;
}

type Raw = Omit<RecordingRow, "app" | "callKnown"> & { appPk: number; callKnown: number };

export function getRecordings(db: Db, f: Filters, scope: Scope): Page<RecordingRow> {
  const q = recordingsQuery(db, f, scope);
  const appIds = new Map(visibleApps(db, scope).map((a) => [a.pk, a.appId]));
  const total = db.get<{ n: number }>(sql`SELECT count(*) AS n FROM (${q})`)?.n ?? 0;
  const rows = db.all<Raw>(sql`${q} LIMIT ${f.perPage} OFFSET ${(f.page - 1) * f.perPage}`);
  return pageOf(rows.map((r) => toRow(r, appIds)), total, f);
}

function toRow(r: Raw, appIds: Map<number, string>): RecordingRow {
  const { appPk, ...rest } = r;
  return { ...rest, app: appIds.get(appPk) ?? String(appPk), callKnown: r.callKnown !== 0 };
}

export function iterateRecordings(db: Db, f: Filters, scope: Scope): IterableIterator<RecordingRow> {
  const appIds = new Map(visibleApps(db, scope).map((a) => [a.pk, a.appId]));
  const it = iterateRows<Raw>(db, recordingsQuery(db, f, scope));
  return (function* () {
    for (const r of it) yield toRow(r, appIds);
  })();
}
