import type { Db } from "@/db/client";
import { eventTime, triggerCategory } from "@/lib/platform/webhook-envelope";
import { callRow, clientSessionRowOfSqlite, deliveryRow, eventCountRow, recordingRow, thousandths, type ClientSessionSqliteRow, type ParticipantFact } from "./rows";
import type { CallChangeV2 } from "./writer-v2";

/**
 * What `npm run warehouse -- copy --to clickhouse` reads from each SQLite table: batches in
 * pk order (keyset paging: one short read per batch, no transaction held across the
 * inserts), shaped as the ClickHouse rows (rows.ts) every writer uses.
 */

export type CopyTable = "calls" | "recordings" | "event_counts" | "webhook_deliveries" | "client_sessions";

export interface Batch {
  /** The largest pk of the batch (the checkpoint after it is written). */
  lastPk: number;
  rows: Array<Record<string, unknown>>;
  /** Calls only: the same calls as schema v2 changes (lib/clickhouse/writer-v2.ts), per app. */
  v2?: Map<number, CallChangeV2[]>;
}

/** Rows copied again because they changed since an earlier run: pk ≤ upTo, changed at or after `sinceMs`. */
export interface Changed {
  upTo: number;
  sinceMs: number;
}

export interface CopySource {
  table: CopyTable;
  /** Rows changed in place can be found again (an updated_ms-like column); otherwise every run copies the whole table. */
  checkpointed: boolean;
  /** SQLite rows to copy, for the progress bar. */
  total(db: Db, after: number, changed?: Changed): number;
  /** Up to `limit` rows with pk > `after` (and, with `changed`, only those changed since), ascending. */
  batch(db: Db, after: number, limit: number, changed?: Changed): Batch;
}

/** `WHERE pk > ? [AND pk <= ? AND <column> >= ?]` and its parameters. */
function range(pk: string, changedColumn: string | undefined, after: number, changed?: Changed): { where: string; params: number[] } {
  if (!changed || !changedColumn) return { where: `${pk} > ?`, params: [after] };
  return { where: `${pk} > ? AND ${pk} <= ? AND ${changedColumn} >= ?`, params: [after, changed.upTo, changed.sinceMs] };
}

interface CallSql {
  pk: number; app_pk: number; session_id: string; mid: string | null; type: string | null; mode: string | null; status: string | null;
  initiator: string | null; receiver: string | null; receiver_type: string | null; initiated_at: number | null; started_at: number | null;
  ended_at: number | null; start_at: number; platform_has_recording: number; total_audio_minutes: number; total_video_minutes: number;
  total_duration_minutes: number; duration_seconds: number; total_participants: number; source: string; content_hash: string | null;
  raw: string | null; first_seen_ms: number; updated_ms: number;
}

interface ParticipantSql {
  call_pk: number; seq: number; uid: string; state: string | null; is_joined: number; total_audio_minutes: number; total_video_minutes: number;
  total_duration_minutes: number; device_id: string | null; joined_at: number | null; left_at: number | null; mid: string | null; raw: string | null;
}

const calls: CopySource = {
  table: "calls",
  checkpointed: true,
  total(db, after, changed) {
    const r = range("pk", "updated_ms", after, changed);
    return db.$client.prepare(`SELECT count(*) FROM calls WHERE ${r.where}`).pluck().get(...r.params) as number;
  },
  batch(db, after, limit, changed) {
    const r = range("pk", "updated_ms", after, changed);
    const rows = db.$client.prepare(`SELECT * FROM calls WHERE ${r.where} ORDER BY pk LIMIT ?`).all(...r.params, limit) as CallSql[];
    if (rows.length === 0) return { lastPk: after, rows: [] };
    const parts = new Map<number, ParticipantFact[]>();
    const participants = db.$client
      .prepare("SELECT * FROM call_participants WHERE call_pk IN (SELECT value FROM json_each(?)) ORDER BY call_pk, seq")
      .all(JSON.stringify(rows.map((c) => c.pk))) as ParticipantSql[];
    for (const p of participants) {
      const list = parts.get(p.call_pk) ?? [];
      list.push({
        seq: p.seq, uid: p.uid, state: p.state, isJoined: p.is_joined !== 0, totalAudioMinutes: p.total_audio_minutes,
        totalVideoMinutes: p.total_video_minutes, totalDurationMinutes: p.total_duration_minutes, deviceId: p.device_id,
        joinedAt: p.joined_at, leftAt: p.left_at, mid: p.mid, raw: p.raw,
      });
      parts.set(p.call_pk, list);
    }
    // The same calls for schema v2: version = updated_ms, so a call copied again unchanged is a replay the writer skips.
    const v2 = new Map<number, CallChangeV2[]>();
    for (const c of rows) {
      const list = v2.get(c.app_pk) ?? [];
      list.push({
        sessionId: c.session_id, version: c.updated_ms, raw: c.raw,
        next: {
          appPk: c.app_pk, sessionId: c.session_id, version: c.updated_ms, startAt: c.start_at, type: c.type, mode: c.mode, status: c.status,
          receiverType: c.receiver_type, platformHasRecording: c.platform_has_recording !== 0, audioX1000: thousandths(c.total_audio_minutes),
          videoX1000: thousandths(c.total_video_minutes), durationX1000: thousandths(c.total_duration_minutes), durationSeconds: c.duration_seconds,
          totalParticipants: c.total_participants, initiatedAt: c.initiated_at, startedAt: c.started_at, endedAt: c.ended_at, initiator: c.initiator,
          receiver: c.receiver, mid: c.mid, firstSeenMs: c.first_seen_ms, arrival: c.pk, source: c.source, contentHash: c.content_hash,
          participants: (parts.get(c.pk) ?? []).map((p) => ({
            seq: p.seq, uid: p.uid, isJoined: p.isJoined, audioX1000: thousandths(p.totalAudioMinutes), videoX1000: thousandths(p.totalVideoMinutes),
            durationX1000: thousandths(p.totalDurationMinutes), state: p.state, deviceId: p.deviceId, joinedAt: p.joinedAt, leftAt: p.leftAt, mid: p.mid, raw: p.raw,
          })),
        },
      });
      v2.set(c.app_pk, list);
    }
    return {
      lastPk: rows[rows.length - 1].pk,
      v2,
      rows: rows.map((c) =>
        callRow({
          appPk: c.app_pk, sessionId: c.session_id, version: c.updated_ms, mid: c.mid, type: c.type, mode: c.mode, status: c.status,
          initiator: c.initiator, receiver: c.receiver, receiverType: c.receiver_type, initiatedAt: c.initiated_at, startedAt: c.started_at,
          endedAt: c.ended_at, startAt: c.start_at, platformHasRecording: c.platform_has_recording !== 0,
          totalAudioMinutes: c.total_audio_minutes, totalVideoMinutes: c.total_video_minutes, totalDurationMinutes: c.total_duration_minutes,
          durationSeconds: c.duration_seconds, totalParticipants: c.total_participants, source: c.source, contentHash: c.content_hash,
          raw: c.raw, firstSeenMs: c.first_seen_ms, updatedMs: c.updated_ms, participants: parts.get(c.pk) ?? [],
          // The source's pk: a copied warehouse breaks ties in its calls list exactly as its source did.
          arrival: c.pk,
        }),
      ),
    };
  },
};

/** Recordings never change once stored (a repeat is ignored): the pk is the whole checkpoint. */
const recordings: CopySource = {
  table: "recordings",
  checkpointed: true,
  total: (db, after, changed) => (changed ? 0 : (db.$client.prepare("SELECT count(*) FROM recordings WHERE pk > ?").pluck().get(after) as number)),
  batch(db, after, limit, changed) {
    if (changed) return { lastPk: after, rows: [] };
    const rows = db.$client.prepare("SELECT * FROM recordings WHERE pk > ? ORDER BY pk LIMIT ?").all(after, limit) as Array<{
      pk: number; app_pk: number; session_id: string; recording_url: string; recording_date: string | null; duration: number | null;
      start_time: number | null; received_ms: number;
    }>;
    return {
      lastPk: rows.at(-1)?.pk ?? after,
      rows: rows.map((r) =>
        recordingRow({ appPk: r.app_pk, sessionId: r.session_id, recordingUrl: r.recording_url, recordingDate: r.recording_date, duration: r.duration, startTime: r.start_time, receivedMs: r.received_ms }),
      ),
    };
  },
};

/** The 15-minute bucket a delivery was counted in (the ingest's rule: the event's own time when plausible, else its arrival). */
function bucketOf(trigger: string, body: string, receivedMs: number): number {
  let t: number | null = null;
  try {
    const data = (JSON.parse(body) as { data?: unknown }).data;
    if (data && typeof data === "object" && !Array.isArray(data)) t = eventTime(trigger, data as Record<string, unknown>);
  } catch {
    // a body that is not JSON was stored as it came: counted at arrival
  }
  const when = t !== null && t >= 1_000_000_000 && t * 1000 <= receivedMs + 86_400_000 ? t : Math.floor(receivedMs / 1000);
  return when - (when % 900);
}

/** A repeat changes repeat_count and last_received_ms: rows repeated since the last run are copied again. */
const deliveries: CopySource = {
  table: "webhook_deliveries",
  checkpointed: true,
  total(db, after, changed) {
    const r = range("pk", "last_received_ms", after, changed);
    return db.$client.prepare(`SELECT count(*) FROM webhook_deliveries WHERE ${r.where}`).pluck().get(...r.params) as number;
  },
  batch(db, after, limit, changed) {
    const r = range("pk", "last_received_ms", after, changed);
    const rows = db.$client.prepare(`SELECT * FROM webhook_deliveries WHERE ${r.where} ORDER BY pk LIMIT ?`).all(...r.params, limit) as Array<{
      pk: number; app_pk: number; idem_key: string; trigger: string; webhook: string; type: string | null; session_id: string | null;
      outcome: string; body: string; received_ms: number; repeat_count: number; last_received_ms: number;
    }>;
    return {
      lastPk: rows.at(-1)?.pk ?? after,
      rows: rows.map((d) =>
        deliveryRow({
          appPk: d.app_pk, idemKey: d.idem_key, trigger: d.trigger, category: triggerCategory(d.trigger), webhook: d.webhook, type: d.type,
          sessionId: d.session_id, outcome: d.outcome, body: d.body, receivedMs: d.received_ms, bucketStart: bucketOf(d.trigger, d.body, d.received_ms),
          repeatCount: d.repeat_count, lastReceivedMs: d.last_received_ms,
        }),
      ),
    };
  },
};

/** Counts grow in place and hold no change stamp: every run copies them all (a few rows per app, trigger and 15 minutes). */
const eventCounts: CopySource = {
  table: "event_counts",
  checkpointed: false,
  total: (db, after) => db.$client.prepare("SELECT count(*) FROM event_counts WHERE rowid > ?").pluck().get(after) as number,
  batch(db, after, limit) {
    const rows = db.$client
      .prepare("SELECT rowid AS pk, app_pk, trigger, bucket_start, count FROM event_counts WHERE rowid > ? ORDER BY rowid LIMIT ?")
      .all(after, limit) as Array<{ pk: number; app_pk: number; trigger: string; bucket_start: number; count: number }>;
    return { lastPk: rows.at(-1)?.pk ?? after, rows: rows.map((r) => eventCountRow({ appPk: r.app_pk, trigger: r.trigger, bucketStart: r.bucket_start, count: r.count })) };
  },
};

/**
 * Participant sessions, in the order of their change stamp (`seq`, which a leave bumps) in
 * place of a pk: the checkpoint after a batch is its last seq, so a later run copies what
 * was added or changed since, and nothing needs a second pass.
 */
const clientSessions: CopySource = {
  table: "client_sessions",
  checkpointed: true,
  total: (db, after, changed) => (changed ? 0 : (db.$client.prepare("SELECT count(*) FROM client_sessions WHERE seq > ?").pluck().get(after) as number)),
  batch(db, after, limit, changed) {
    if (changed) return { lastPk: after, rows: [] };
    const rows = db.$client.prepare("SELECT * FROM client_sessions WHERE seq > ? ORDER BY seq LIMIT ?").all(after, limit) as ClientSessionSqliteRow[];
    return { lastPk: rows.at(-1)?.seq ?? after, rows: rows.map(clientSessionRowOfSqlite) };
  },
};

export const COPY_SOURCES: readonly CopySource[] = [calls, recordings, deliveries, eventCounts, clientSessions];
