import { sql, type SQL } from "drizzle-orm";
import type { Db } from "@/db/client";
import { notFound } from "@/lib/http/errors";
import type { Filters } from "./filters";
import { and, iterateRows, rawConditions, resolveApps, round3, timeCondition, visibleApps, type Scope } from "./query";
import { countMatching } from "./scan";

/** One call of the list (and of the CSV), as Callboard stores it. */
export interface CallListRow {
  app: string;
  sessionId: string;
  type: string | null;
  mode: string | null;
  status: string | null;
  initiator: string | null;
  receiver: string | null;
  receiverType: string | null;
  initiatedAt: number | null;
  startedAt: number | null;
  endedAt: number | null;
  /** startedAt, or initiatedAt for calls never started: what time filters use. */
  startAt: number;
  hasRecording: boolean;
  totalAudioMinutes: number;
  totalVideoMinutes: number;
  totalDurationMinutes: number;
  durationSeconds: number;
  totalParticipants: number;
}

export interface Pagination {
  total: number;
  count: number;
  per_page: number;
  current_page: number;
  total_pages: number;
}

export interface Page<T> {
  data: T[];
  meta: { pagination: Pagination };
}

const SORT_SQL: Record<Filters["sort"], string> = {
  start: "c.start_at",
  duration: "c.duration_seconds",
  participants: "c.total_participants",
  minutes: "(c.total_audio_minutes + c.total_video_minutes)",
};

function listQuery(f: Filters, appPks: number[] | "all"): SQL {
  const dir = sql.raw(f.order === "asc" ? "ASC" : "DESC");
  return sql`SELECT c.app_pk AS appPk, c.session_id AS sessionId, c.type, c.mode, c.status, c.initiator, c.receiver,
      c.receiver_type AS receiverType, c.initiated_at AS initiatedAt, c.started_at AS startedAt, c.ended_at AS endedAt,
      c.start_at AS startAt, c.has_recording AS hasRecording, c.total_audio_minutes AS totalAudioMinutes,
      c.total_video_minutes AS totalVideoMinutes, c.total_duration_minutes AS totalDurationMinutes,
      c.duration_seconds AS durationSeconds, c.total_participants AS totalParticipants
    FROM calls c WHERE ${and([...rawConditions(f, appPks), timeCondition(f.from, f.to)])}
    ORDER BY ${sql.raw(SORT_SQL[f.sort])} ${dir}, c.pk ${dir}`;
}

type RawListRow = Omit<CallListRow, "app" | "hasRecording"> & { appPk: number; hasRecording: number };

function toRow(r: RawListRow, appIds: Map<number, string>): CallListRow {
  const { appPk, ...rest } = r;
  return {
    ...rest,
    app: appIds.get(appPk) ?? String(appPk),
    hasRecording: r.hasRecording !== 0,
    totalAudioMinutes: round3(r.totalAudioMinutes),
    totalVideoMinutes: round3(r.totalVideoMinutes),
    totalDurationMinutes: round3(r.totalDurationMinutes),
  };
}

/** Number of calls matching the filters (a scan of the in-memory store). */
export function countCalls(db: Db, f: Filters, appPks: number[] | "all"): number {
  return countMatching(db, f, appPks);
}

/** The calls matching the filters, one page, sorted by `sort`/`order`. */
export function getCalls(db: Db, f: Filters, scope: Scope): Page<CallListRow> {
  const appPks = resolveApps(db, f, scope);
  const appIds = new Map(visibleApps(db, scope).map((a) => [a.pk, a.appId]));
  const total = countCalls(db, f, appPks);
  const offset = (f.page - 1) * f.perPage;
  const rows = offset >= total ? [] : db.all<RawListRow>(sql`${listQuery(f, appPks)} LIMIT ${f.perPage} OFFSET ${offset}`);
  const data = rows.map((r) => toRow(r, appIds));
  return {
    data,
    meta: { pagination: { total, count: data.length, per_page: f.perPage, current_page: f.page, total_pages: Math.ceil(total / f.perPage) } },
  };
}

/** Every call matching the filters (no paging), streamed from SQLite: for the CSV. */
export function iterateCalls(db: Db, f: Filters, scope: Scope): IterableIterator<CallListRow> {
  const appPks = resolveApps(db, f, scope);
  const appIds = new Map(visibleApps(db, scope).map((a) => [a.pk, a.appId]));
  const it = iterateRows<RawListRow>(db, listQuery(f, appPks));
  return (function* () {
    for (const r of it) yield toRow(r, appIds);
  })();
}

/**
 * The same rows as `iterateCalls`, as arrays in the CSV's column order (CALL_COLUMNS;
 * hasRecording as 0/1, minutes unrounded): no object per row, for the CSV export.
 */
export function iterateCallsRaw(db: Db, f: Filters, scope: Scope): IterableIterator<unknown[]> {
  const appPks = resolveApps(db, f, scope);
  const appIds = new Map(visibleApps(db, scope).map((a) => [a.pk, a.appId]));
  const dir = sql.raw(f.order === "asc" ? "ASC" : "DESC");
  const it = iterateRows<unknown[]>(
    db,
    sql`SELECT c.app_pk, c.session_id, c.type, c.mode, c.status, c.initiator, c.receiver, c.receiver_type, c.initiated_at, c.started_at,
        c.ended_at, c.start_at, c.has_recording, c.total_audio_minutes, c.total_video_minutes, c.total_duration_minutes,
        c.duration_seconds, c.total_participants
      FROM calls c WHERE ${and([...rawConditions(f, appPks), timeCondition(f.from, f.to)])}
      ORDER BY ${sql.raw(SORT_SQL[f.sort])} ${dir}, c.pk ${dir}`,
    true,
  );
  return (function* () {
    for (const r of it) {
      r[0] = appIds.get(r[0] as number) ?? String(r[0]);
      yield r;
    }
  })();
}

export interface CallParticipantDetail {
  seq: number;
  uid: string;
  state: string | null;
  isJoined: boolean;
  joinedAt: number | null;
  leftAt: number | null;
  totalAudioMinutes: number;
  totalVideoMinutes: number;
  totalDurationMinutes: number;
  deviceId: string | null;
  mid: string | null;
}

export interface RecordingDetail {
  recordingUrl: string;
  recordingDate: string | null;
  duration: number | null;
  startTime: number | null;
  receivedMs: number;
}

export interface CallDetail extends CallListRow {
  mid: string | null;
  source: string;
  /** The platform's record exactly as the sync last received it (null for a call known only from webhooks). */
  raw: Record<string, unknown> | null;
  participants: CallParticipantDetail[];
  recordings: RecordingDetail[];
}

function parseRaw(text: string | null): Record<string, unknown> | null {
  if (text === null) return null;
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** One call with its participants and recordings; 404 when it does not exist or the
 * caller may not see its app. */
export function getCall(db: Db, ref: { app: string; sessionId: string }, scope: Scope): CallDetail {
  const app = visibleApps(db, scope).find((a) => a.appId === ref.app);
  if (!app) throw notFound(`app "${ref.app}" not found`);
  const row = db.get<RawListRow & { pk: number; mid: string | null; source: string; raw: string | null }>(sql`SELECT c.pk, c.app_pk AS appPk,
      c.session_id AS sessionId, c.mid, c.source, c.raw, c.type, c.mode, c.status, c.initiator, c.receiver, c.receiver_type AS receiverType,
      c.initiated_at AS initiatedAt, c.started_at AS startedAt, c.ended_at AS endedAt, c.start_at AS startAt, c.has_recording AS hasRecording,
      c.total_audio_minutes AS totalAudioMinutes, c.total_video_minutes AS totalVideoMinutes,
      c.total_duration_minutes AS totalDurationMinutes, c.duration_seconds AS durationSeconds, c.total_participants AS totalParticipants
    FROM calls c WHERE c.app_pk = ${app.pk} AND c.session_id = ${ref.sessionId}`);
  if (!row) throw notFound(`call "${ref.sessionId}" not found in app "${ref.app}"`);
  const participants = db
    .all<Omit<CallParticipantDetail, "isJoined"> & { isJoined: number }>(sql`SELECT seq, uid, state, is_joined AS isJoined,
      joined_at AS joinedAt, left_at AS leftAt, total_audio_minutes AS totalAudioMinutes, total_video_minutes AS totalVideoMinutes,
      total_duration_minutes AS totalDurationMinutes, device_id AS deviceId, mid
    FROM call_participants WHERE call_pk = ${row.pk} ORDER BY seq`)
    .map((p) => ({ ...p, isJoined: p.isJoined !== 0 }));
  const recordings = db.all<RecordingDetail>(sql`SELECT recording_url AS recordingUrl, recording_date AS recordingDate, duration,
      start_time AS startTime, received_ms AS receivedMs
    FROM recordings WHERE app_pk = ${app.pk} AND session_id = ${ref.sessionId} ORDER BY start_time, pk`);
  const { pk: _pk, mid, source, raw, ...rest } = row;
  return { ...toRow(rest, new Map([[app.pk, app.appId]])), mid, source, raw: parseRaw(raw), participants, recordings };
}
