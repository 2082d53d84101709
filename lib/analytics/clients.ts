import { sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import type { PgDb } from "@/db/postgres/client";
import { isPostgresState } from "@/db/state";
import type { CallClientRow, ClientDimension, ClientRow } from "./report-types";
import { CLIENT_DIMENSIONS } from "./report-types";

/**
 * The clients report's counting, shared by both engines. Each reads the `client_sessions`
 * table (one row per participant session, kept at ingest: lib/ingest/client-sessions.ts,
 * docs/decisions/0017-client-sessions.md) where it keeps it, groups it by app and the
 * value of each dimension with the expressions below (plain SQL that SQLite and
 * ClickHouse read alike), and hands the counts here for shares and order. A session
 * counts in the period of its `counted_at` (its joined_at, else the second it was received).
 */

/** Each dimension's value of a `client_sessions` row (`unknown`: the join did not say). */
export const CLIENT_VALUE_SQL: Record<ClientDimension, string> = {
  platform: "CASE WHEN platform IS NULL THEN 'unknown' ELSE platform END",
  sdk: "CASE WHEN sdk IS NULL THEN 'unknown' WHEN call_version IS NULL THEN sdk ELSE sdk || ' ' || call_version END",
  // A join that does not say whether it is audio only may still say the occupant's audio_call.
  media: "CASE WHEN coalesce(is_audio_only, audio_call, 2) = 1 THEN 'audio only' WHEN coalesce(is_audio_only, audio_call, 2) = 0 THEN 'video' ELSE 'unknown' END",
  videoMuted: "CASE WHEN coalesce(is_video_muted, 2) = 1 THEN 'camera off' WHEN coalesce(is_video_muted, 2) = 0 THEN 'camera on' ELSE 'unknown' END",
};

/** Participant sessions with one value of one dimension in one app, and the distinct calls they were in. */
export interface ClientCount {
  appPk: number;
  dimension: string;
  value: string;
  sessions: number;
  calls: number;
}

/** The report's rows: share of the app's sessions; by app, dimension (CLIENT_DIMENSIONS' order), most sessions, value. */
export function clientRows(counts: Iterable<ClientCount>, appId: (pk: number) => string): ClientRow[] {
  const list = [...counts].map((c) => ({ ...c, sessions: Number(c.sessions), calls: Number(c.calls), appPk: Number(c.appPk) }));
  const totals = new Map<string, number>();
  for (const c of list) totals.set(`${c.appPk}\u0000${c.dimension}`, (totals.get(`${c.appPk}\u0000${c.dimension}`) ?? 0) + c.sessions);
  const rows: ClientRow[] = list.map((c) => ({
    app: appId(c.appPk),
    dimension: c.dimension as ClientDimension,
    value: c.value,
    sessions: c.sessions,
    calls: c.calls,
    share: Math.round((c.sessions / (totals.get(`${c.appPk}\u0000${c.dimension}`) || 1)) * 1000) / 1000,
  }));
  const order = (d: string) => CLIENT_DIMENSIONS.indexOf(d as ClientDimension);
  return rows.sort((a, b) => a.app.localeCompare(b.app) || order(a.dimension) - order(b.dimension) || b.sessions - a.sessions || a.value.localeCompare(b.value));
}

/** At most this many participant sessions on a call's page (as its event log). */
export const MAX_CALL_CLIENTS = 500;

/**
 * What each participant session of one call joined with, in the order they joined: read
 * from SQLite's `client_sessions` by either engine (SQLite keeps the table in both modes),
 * with the report's values.
 */
export function getCallClients(db: Db, appPk: number, sessionId: string): CallClientRow[] {
  const v = (d: ClientDimension) => sql.raw(CLIENT_VALUE_SQL[d]);
  return db.all<CallClientRow>(sql`SELECT occupant, joined_at AS joinedAt, left_at AS leftAt, ${v("platform")} AS platform, ${v("sdk")} AS sdk,
      ${v("media")} AS media, ${v("videoMuted")} AS videoMuted
    FROM client_sessions WHERE app_pk = ${appPk} AND session_id = ${sessionId}
    ORDER BY counted_at, occupant LIMIT ${MAX_CALL_CLIENTS}`);
}

/**
 * `getCallClients` from either state store: with DATABASE_URL, Postgres's `client_sessions`
 * (kept by the Postgres inbox, lib/ingest/postgres-client-sessions.ts), the same query
 * (its value expressions are plain SQL both read alike) with pg's bigints made numbers.
 */
export async function readCallClients(db: Db, appPk: number, sessionId: string): Promise<CallClientRow[]> {
  if (!isPostgresState(db)) return getCallClients(db, appPk, sessionId);
  const v = (d: ClientDimension) => sql.raw(CLIENT_VALUE_SQL[d]);
  type PgRow = Omit<CallClientRow, "joinedAt" | "leftAt"> & { joinedAt: string | number | null; leftAt: string | number | null };
  const result = await (db as unknown as PgDb).execute<PgRow>(sql`SELECT occupant, joined_at AS "joinedAt", left_at AS "leftAt", ${v("platform")} AS platform,
      ${v("sdk")} AS sdk, ${v("media")} AS media, ${v("videoMuted")} AS "videoMuted"
    FROM client_sessions WHERE app_pk = ${appPk} AND session_id = ${sessionId}
    ORDER BY counted_at, occupant LIMIT ${MAX_CALL_CLIENTS}`);
  const num = (x: string | number | null) => (x === null ? null : Number(x));
  return result.rows.map((r) => ({ ...r, joinedAt: num(r.joinedAt), leftAt: num(r.leftAt) }) as CallClientRow);
}
