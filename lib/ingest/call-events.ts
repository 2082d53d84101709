import { and, asc, eq, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { isPostgresState, tablesOf } from "@/db/state";
import { eventTime, isLiveTrigger, isObject, parseLive, parseRecording, RECORDING_TRIGGER } from "../platform/webhook-envelope";

/**
 * One call's event log: every webhook delivery stored for its session (initiated,
 * started, joins, leaves, ended, recording), in the order the events happened, with
 * what each says. Read from `webhook_deliveries` (index of migration 0018), whichever
 * analytics engine answers the rest of the call; deliveries past the raw retention
 * (90 days by default: lib/ingest/store.ts) are gone and so missing here.
 */
export interface CallEventRow {
  trigger: string;
  /** The event's own time (epoch seconds) where it carries one, else null (then `receivedMs` orders it). */
  at: number | null;
  /** When Callboard first received it (epoch ms). */
  receivedMs: number;
  outcome: "applied" | "stored" | "failed";
  /** Deliveries of the same event after the first. */
  repeats: number;
  /** Who: the occupant of a join or leave, initiator → receiver of an initiated call. */
  who: string | null;
  /** What else it says: audio only or video and the client of a join (platform, sdk), the receiver's type, how many were listed at the end. */
  detail: string | null;
  /** A recording's length (seconds), from recording_generated. */
  durationSeconds: number | null;
}

/** At most this many events per call (a call with more shows the first ones and says so). */
export const MAX_CALL_EVENTS = 500;

type Said = Pick<CallEventRow, "who" | "detail" | "durationSeconds">;

function describe(trigger: string, type: string | null, data: Record<string, unknown>): Said {
  const none: Said = { who: null, detail: null, durationSeconds: null };
  try {
    if (trigger === RECORDING_TRIGGER) return { ...none, durationSeconds: parseRecording(data).duration };
    if (!isLiveTrigger(trigger)) return none;
    const ev = parseLive(trigger, type ?? undefined, data);
    if (ev.step === "initiated") return { ...none, who: [ev.initiator, ev.receiver].filter(Boolean).join(" → ") || null, detail: ev.receiverType };
    if (ev.step === "joined" || ev.step === "left") {
      const o = ev.occupants[0];
      const media = o === undefined || o.audioOnly === null ? null : o.audioOnly ? "audio only" : "video";
      // A join says what it joined with (initial_config): platform, sdk and its call version.
      const config = isObject(data.initial_config) ? data.initial_config : {};
      const platform = typeof config.platform === "string" && config.platform ? config.platform : null;
      const sdk = typeof config.sdk === "string" && config.sdk ? `sdk ${config.sdk}${config.call_version ? ` ${String(config.call_version)}` : ""}` : null;
      return { ...none, who: o?.name || null, detail: [media, platform, sdk].filter(Boolean).join(" · ") || null };
    }
    if (ev.step === "ended") return { ...none, who: ev.occupants.map((o) => o.name).filter(Boolean).join(", ") || null, detail: `${ev.occupants.length} listed at the end` };
    return none;
  } catch {
    // A stored body the parser refuses (it was stored as received): listed, without details.
    return none;
  }
}

type StoredEvent = { trigger: string; type: string | null; outcome: CallEventRow["outcome"]; body: string; receivedMs: number; repeats: number };

/** The SQLite file's deliveries of one call (synchronous: the in-memory engine's call page). */
export function getCallEvents(db: Db, appPk: number, sessionId: string): CallEventRow[] {
  const rows = db.all<StoredEvent>(
    sql`SELECT trigger, type, outcome, body, received_ms AS receivedMs, repeat_count AS repeats
      FROM webhook_deliveries INDEXED BY webhook_deliveries_app_session_idx
      WHERE app_pk = ${appPk} AND session_id = ${sessionId} AND session_id IS NOT NULL
      ORDER BY pk LIMIT ${MAX_CALL_EVENTS}`,
  );
  return eventsOf(rows);
}

/**
 * One call's event log from either state store: the SQLite file (as `getCallEvents`, whose
 * index hint drizzle's builder cannot say), or the Postgres every server stores its
 * deliveries in (DATABASE_URL), so a call's page shows what any server received.
 */
export async function readCallEvents(db: Db, appPk: number, sessionId: string): Promise<CallEventRow[]> {
  if (!isPostgresState(db)) return getCallEvents(db, appPk, sessionId);
  const { webhookDeliveries: d } = tablesOf(db);
  const rows = await db
    .select({ trigger: d.trigger, type: d.type, outcome: d.outcome, body: d.body, receivedMs: d.receivedMs, repeats: d.repeatCount })
    .from(d)
    .where(and(eq(d.appPk, appPk), eq(d.sessionId, sessionId)))
    .orderBy(asc(d.pk))
    .limit(MAX_CALL_EVENTS);
  return eventsOf(rows);
}

function eventsOf(rows: StoredEvent[]): CallEventRow[] {
  const events = rows.map((r) => {
    let data: Record<string, unknown> = {};
    try {
      const body = JSON.parse(r.body) as unknown;
      if (isObject(body) && isObject(body.data)) data = body.data;
    } catch {
      // stored as received; nothing to read
    }
    return { trigger: r.trigger, at: eventTime(r.trigger, data), receivedMs: r.receivedMs, outcome: r.outcome, repeats: r.repeats, ...describe(r.trigger, r.type, data) };
  });
  // In the order they happened; an event without its own time where it was received.
  const when = (e: CallEventRow) => e.at ?? Math.floor(e.receivedMs / 1000);
  return events.map((e, i) => ({ e, i })).sort((a, b) => when(a.e) - when(b.e) || a.i - b.i).map(({ e }) => e);
}
