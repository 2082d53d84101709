import { and, count, desc, eq, gte, inArray, lt, ne, or, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { apps, eventCounts, type AppRow } from "@/db/schema";
import { isPostgresState, tablesOf } from "@/db/state";
import { HttpError } from "@/lib/http/errors";
import { triggerCategory, type TriggerCategory } from "../platform/webhook-envelope";
import { ingestUrlFor } from "./url";

export { ingestUrlFor };

/**
 * Read side of the ingest, for the dashboard. Every query is limited to `appPks` (the
 * caller's grants). The live sessions, recent deliveries and delivery counts are read from
 * either state store (SQLite, or Postgres with DATABASE_URL: one query, decision 0042);
 * event counts stay SQLite's (the in-memory engine's; ClickHouse reads its own).
 */

// ---------------------------------------------------------------------------- live

export interface LiveOccupant {
  name: string;
  /** Epoch seconds; null when no event reported it. */
  joinedAt: number | null;
  leftAt: number | null;
  audioOnly: boolean | null;
}

export interface LiveSession {
  appPk: number;
  appId: string;
  sessionId: string;
  kind: "call" | "meet";
  status: "initiated" | "ongoing" | "ended";
  initiator: string | null;
  receiver: string | null;
  receiverType: string | null;
  initiatedAt: number | null;
  startedAt: number | null;
  endedAt: number | null;
  lastEventMs: number;
  occupants: LiveOccupant[];
  /** Occupants with no leave time. */
  presentCount: number;
}

export interface LiveSessionsParams {
  nowMs?: number;
  /** A session with no event for this long is no longer shown as going on (default 6 h). */
  staleAfterMs?: number;
  /** Also list sessions that ended within this window (default 0: only going on now). */
  endedWithinMs?: number;
}

const FINISHED_CALL_STATUSES = ["ended", "rejected", "unanswered"];

/**
 * Calls and meetings going on now, per the live webhooks. A session the sync already
 * brought as finished is left out: the sync's record is the truth. (With the state in
 * Postgres the calls are in ClickHouse, out of a join's reach: a live session shows until
 * its own ended event or its staleness, as a call the sync has not brought yet does.)
 */
export async function getLiveSessions(db: Db, appPks: number[], params: LiveSessionsParams = {}): Promise<LiveSession[]> {
  if (appPks.length === 0) return [];
  const { apps, liveOccupants, liveSessions } = tablesOf(db);
  const now = params.nowMs ?? Date.now();
  const staleBefore = now - (params.staleAfterMs ?? 6 * 3_600_000);
  const endedAfter = now - (params.endedWithinMs ?? 0);
  const rows = await db
    .select({
      pk: liveSessions.pk, appPk: liveSessions.appPk, appId: apps.appId, sessionId: liveSessions.sessionId,
      kind: liveSessions.kind, status: liveSessions.status, initiator: liveSessions.initiator,
      receiver: liveSessions.receiver, receiverType: liveSessions.receiverType,
      initiatedAt: liveSessions.initiatedAt, startedAt: liveSessions.startedAt, endedAt: liveSessions.endedAt,
      lastEventMs: liveSessions.lastEventMs,
    })
    .from(liveSessions)
    .innerJoin(apps, eq(apps.pk, liveSessions.appPk))
    .where(
      and(
        inArray(liveSessions.appPk, appPks),
        or(
          and(ne(liveSessions.status, "ended"), gte(liveSessions.lastEventMs, staleBefore)),
          params.endedWithinMs ? and(eq(liveSessions.status, "ended"), gte(liveSessions.lastEventMs, endedAfter)) : undefined,
        ),
        // The sync's finished record replaces the live estimate.
        isPostgresState(db)
          ? undefined
          : sql`NOT EXISTS (SELECT 1 FROM ${tablesOf(db).calls} c WHERE c.app_pk = ${liveSessions.appPk} AND c.session_id = ${liveSessions.sessionId}
            AND c.source = 'sync' AND c.status IN (${sql.join(FINISHED_CALL_STATUSES.map((s) => sql`${s}`), sql`, `)})
            AND ${liveSessions.status} <> 'ended')`,
      ),
    )
    .orderBy(desc(liveSessions.lastEventMs))
    .limit(1000);
  if (rows.length === 0) return [];
  const occ = await db
    .select()
    .from(liveOccupants)
    .where(inArray(liveOccupants.sessionPk, rows.map((r) => r.pk)))
    .orderBy(liveOccupants.sessionPk, liveOccupants.joinedAt);
  const bySession = new Map<number, LiveOccupant[]>();
  for (const o of occ) {
    const list = bySession.get(o.sessionPk) ?? [];
    list.push({ name: o.name, joinedAt: o.joinedAt === 0 ? null : o.joinedAt, leftAt: o.leftAt, audioOnly: o.audioOnly });
    bySession.set(o.sessionPk, list);
  }
  return rows.map(({ pk, ...r }) => {
    const occupants = bySession.get(pk) ?? [];
    return { ...r, occupants, presentCount: r.status === "ended" ? 0 : occupants.filter((o) => o.leftAt === null).length };
  });
}

// ---------------------------------------------------------------------- event counts

export interface EventCountsParams {
  /** Epoch seconds, inclusive (resolution 15 minutes). */
  from: number;
  /** Epoch seconds, exclusive. */
  to: number;
  /** IANA time zone of the days (default UTC). */
  tz?: string;
}

export interface EventCount {
  appPk: number;
  appId: string;
  /** YYYY-MM-DD in `tz`. */
  day: string;
  trigger: string;
  category: TriggerCategory;
  count: number;
}

const dayFormats = new Map<string, Intl.DateTimeFormat>();
function dayFormat(tz: string): Intl.DateTimeFormat {
  let f = dayFormats.get(tz);
  if (!f) {
    try {
      f = new Intl.DateTimeFormat("en-CA", { timeZone: tz, year: "numeric", month: "2-digit", day: "2-digit" });
    } catch {
      throw new HttpError(400, "invalid_parameter", `tz: unknown time zone "${tz.slice(0, 64)}"`, { parameter: "tz" });
    }
    dayFormats.set(tz, f);
  }
  return f;
}

/** Deliveries per app, trigger and day (each event counted once, repeats never). */
export function getEventCounts(db: Db, appPks: number[], params: EventCountsParams): EventCount[] {
  dayFormat(params.tz ?? "UTC"); // an unknown zone is a 400 whether or not there are counts
  if (appPks.length === 0 || !(params.to > params.from)) return [];
  const rows = db
    .select({ appPk: eventCounts.appPk, appId: apps.appId, trigger: eventCounts.trigger, bucketStart: eventCounts.bucketStart, count: eventCounts.count })
    .from(eventCounts)
    .innerJoin(apps, eq(apps.pk, eventCounts.appPk))
    .where(and(inArray(eventCounts.appPk, appPks), gte(eventCounts.bucketStart, eventCountsFrom(params)), lt(eventCounts.bucketStart, params.to)))
    .all();
  return eventCountsByDay(rows, params.tz);
}

/** First 15-minute bucket of the range (a bucket holding `from` counts). */
export const eventCountsFrom = (params: EventCountsParams): number => params.from - (params.from % 900);

/**
 * Counts per 15-minute bucket summed per app, local day in `tz` and trigger, in day, app
 * and trigger order: the events report from whichever store holds the buckets (SQLite
 * here, ClickHouse in lib/analytics/engines/clickhouse).
 */
export function eventCountsByDay(rows: Iterable<{ appPk: number; appId: string; trigger: string; bucketStart: number; count: number }>, tz = "UTC"): EventCount[] {
  const fmt = dayFormat(tz);
  const out = new Map<string, EventCount>();
  for (const r of rows) {
    const day = fmt.format(new Date(r.bucketStart * 1000));
    const key = `${r.appPk}\u0000${day}\u0000${r.trigger}`;
    const hit = out.get(key);
    if (hit) hit.count += r.count;
    else out.set(key, { appPk: r.appPk, appId: r.appId, day, trigger: r.trigger, category: triggerCategory(r.trigger), count: r.count });
  }
  return [...out.values()].sort((a, b) => a.day.localeCompare(b.day) || a.appId.localeCompare(b.appId) || a.trigger.localeCompare(b.trigger));
}

/**
 * Deliveries of these apps first received in [fromMs, toMs) (the alerts' "webhook
 * deliveries received"): a repeat of an event is the same delivery and counts once.
 */
export async function countDeliveries(db: Db, appPks: readonly number[], fromMs: number, toMs: number): Promise<number> {
  if (appPks.length === 0 || !(toMs > fromMs)) return 0;
  const { webhookDeliveries } = tablesOf(db);
  const [row] = await db
    .select({ n: count() })
    .from(webhookDeliveries)
    .where(and(inArray(webhookDeliveries.appPk, [...appPks]), gte(webhookDeliveries.receivedMs, fromMs), lt(webhookDeliveries.receivedMs, toMs)));
  return row?.n ?? 0;
}

// ------------------------------------------------------------------ recent deliveries

export type DeliveryOutcomeFilter = "all" | "accepted" | "rejected" | "applied" | "stored" | "failed";

export interface RecentDeliveriesParams {
  /** Default 50, at most 500. */
  limit?: number;
  outcome?: DeliveryOutcomeFilter;
}

export type RecentDelivery =
  | {
      kind: "accepted";
      id: number;
      appPk: number;
      appId: string;
      trigger: string;
      receivedMs: number;
      outcome: "applied" | "stored" | "failed";
      sessionId: string | null;
      /** Repeats of this delivery answered 200 and ignored. */
      repeatCount: number;
      lastReceivedMs: number;
    }
  | {
      kind: "rejected";
      id: number;
      appPk: number;
      appId: string;
      trigger: string | null;
      receivedMs: number;
      status: number;
      code: string;
      reason: string;
    };

/** Newest first. Bodies are not included (they can hold message texts). */
export async function getRecentDeliveries(db: Db, appPks: number[], params: RecentDeliveriesParams = {}): Promise<RecentDelivery[]> {
  if (appPks.length === 0) return [];
  const { apps, webhookDeliveries, webhookRejections } = tablesOf(db);
  const limit = Math.max(1, Math.min(500, Math.floor(params.limit ?? 50)));
  const outcome = params.outcome ?? "all";
  const result: RecentDelivery[] = [];
  if (outcome !== "rejected") {
    const conds = [inArray(webhookDeliveries.appPk, appPks)];
    if (outcome === "applied" || outcome === "stored" || outcome === "failed") conds.push(eq(webhookDeliveries.outcome, outcome));
    const rows = await db
      .select({
        id: webhookDeliveries.pk, appPk: webhookDeliveries.appPk, appId: apps.appId, trigger: webhookDeliveries.trigger,
        receivedMs: webhookDeliveries.receivedMs, outcome: webhookDeliveries.outcome, sessionId: webhookDeliveries.sessionId,
        repeatCount: webhookDeliveries.repeatCount, lastReceivedMs: webhookDeliveries.lastReceivedMs,
      })
      .from(webhookDeliveries)
      .innerJoin(apps, eq(apps.pk, webhookDeliveries.appPk))
      .where(and(...conds))
      .orderBy(desc(webhookDeliveries.receivedMs), desc(webhookDeliveries.pk))
      .limit(limit);
    for (const r of rows) result.push({ kind: "accepted", ...r });
  }
  if (outcome === "all" || outcome === "rejected") {
    const rows = await db
      .select({
        id: webhookRejections.pk, appPk: webhookRejections.appPk, appId: apps.appId, trigger: webhookRejections.trigger,
        receivedMs: webhookRejections.receivedMs, status: webhookRejections.status, code: webhookRejections.code, reason: webhookRejections.reason,
      })
      .from(webhookRejections)
      .innerJoin(apps, eq(apps.pk, webhookRejections.appPk))
      .where(inArray(webhookRejections.appPk, appPks))
      .orderBy(desc(webhookRejections.receivedMs), desc(webhookRejections.pk))
      .limit(limit);
    for (const r of rows) result.push({ kind: "rejected", ...r });
  }
  return result.sort((a, b) => b.receivedMs - a.receivedMs).slice(0, limit);
}

// --------------------------------------------------------------------- settings

export interface WebhookSettingsView {
  ingestUrl: string;
  id: string | null;
  name: string | null;
  enabled: boolean;
  useBasicAuth: boolean;
  username: string | null;
  /** The password itself is never shown back. */
  passwordSet: boolean;
}

/** An app's webhook settings, safe to print or send to a browser. */
export function describeWebhook(app: AppRow, baseUrl: string): WebhookSettingsView {
  return {
    ingestUrl: ingestUrlFor(baseUrl, app.appId),
    id: app.webhookId,
    name: app.webhookName,
    enabled: app.webhookEnabled,
    useBasicAuth: app.webhookUseBasicAuth,
    username: app.webhookUsername,
    passwordSet: app.webhookPasswordEnc !== null,
  };
}
