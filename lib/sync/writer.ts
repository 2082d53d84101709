import { isUtf8 } from "node:buffer";
import { hash } from "node:crypto";
import type Database from "better-sqlite3";
import type { Statement, Transaction } from "better-sqlite3";
import type { Db } from "@/db/client";
import type { ParsedCall } from "@/lib/platform/call-record";

/**
 * The warehouse side of the sync: classifies each parsed record against what is stored
 * (new / changed / unchanged, by a hash of the raw record) and writes pending records in
 * large transactions with statements prepared once. Upserts are idempotent, so a run
 * killed between two transactions and started again converges.
 */

export interface Existing {
  hash: string | null;
  source: string;
  status: string | null;
}

export interface PendingCall {
  call: ParsedCall;
  /**
   * The record's raw text, or null when it stays in the page's own bytes at
   * [rawStart, rawEnd) until the write side decodes it (`resolveRawTexts`).
   */
  rawJson: string | null;
  rawStart?: number;
  rawEnd?: number;
  hash: string;
  /** Per participant, its unknown keys as JSON (null when it has none). */
  participantExtras: Array<string | null>;
}

/**
 * One call as the writer binds it: a flat array of primitives (see `toWriteRow`).
 * Flat because batches cross to the write worker by `postMessage`, and V8's structured
 * clone of a flat array costs about half what the same data costs as objects (no key
 * strings per object): 7 + 11 µs per call instead of 11 + 20.
 */
export type WriteRow = unknown[];

/** Positions in a WriteRow. */
export const W = {
  sessionId: 0, mid: 1, type: 2, mode: 3, status: 4, initiator: 5, receiver: 6, receiverType: 7,
  initiatedAt: 8, startedAt: 9, endedAt: 10, startAt: 11, hasRecording: 12, audio: 13, video: 14,
  durationMinutes: 15, durationSeconds: 16, totalParticipants: 17, hash: 18,
  /**
   * The raw record: its text, or (staged with the page's bytes) its start offset in the
   * page, with its end at rawEnd; `resolveRawTexts` turns offsets into text on the
   * write side, so the sync thread never decodes nor copies a record's text.
   */
  raw: 19, rawEnd: 20, participantCount: 21,
  /** Where participant values start: PART_WIDTH each, in call_participants column order from seq. */
  parts: 22,
} as const;
export const PART_WIDTH = 12; // seq uid state is_joined audio video duration device_id joined_at left_at mid raw

export function toWriteRow(p: PendingCall): WriteRow {
  const c = p.call;
  const row: unknown[] = [
    c.sessionId, c.mid, c.type, c.mode, c.status, c.initiator, c.receiver, c.receiverType,
    c.initiatedAt, c.startedAt, c.endedAt, c.startAt, b(c.hasRecording), c.totalAudioMinutes, c.totalVideoMinutes,
    c.totalDurationMinutes, c.durationSeconds, c.totalParticipants, p.hash,
    p.rawJson ?? p.rawStart, p.rawJson === null ? p.rawEnd : null, c.participants.length,
  ];
  // Pushed, not preallocated: `new Array(n)` is holey, and postMessage writes a holey
  // array key by key instead of densely.
  for (const part of c.participants) {
    row.push(
      part.seq, part.uid, part.state, b(part.isJoined), part.totalAudioMinutes, part.totalVideoMinutes,
      part.totalDurationMinutes, part.deviceId, part.joinedAt, part.leftAt, part.mid, p.participantExtras[part.seq] ?? null,
    );
  }
  return row;
}

/** Participant keys the typed columns hold; anything else goes to the participant's `raw`. */
function isKnownParticipantKey(k: string): boolean {
  // A switch on property names (internalized strings) is several times cheaper than a
  // Set lookup, and this runs for every key of every participant of a backfill.
  switch (k) {
    case "uid": case "state": case "isJoined": case "totalAudioMinutes": case "totalVideoMinutes":
    case "totalDuration": case "deviceId": case "joinedAt": case "leftAt": case "mid":
      return true;
    default:
      return false;
  }
}

/**
 * The hash unchanged calls are told by: of the record's UTF-8 text. Given the page's
 * bytes it hashes the record's own bytes, which is the same digest for any valid UTF-8
 * without decoding them (a record with invalid UTF-8, whose text holds U+FFFD instead,
 * hashes differently and is rewritten once by the first sync that hashes its bytes).
 */
export function contentHash(rawJson: string | Uint8Array): string {
  return hash("sha1", rawJson, "base64url");
}

/**
 * Decodes the raw records staged as offsets into their page (`W.raw`, `W.rawEnd`) into
 * text, in place: on the write worker (the page's bytes are transferred to it, not
 * copied), or before an inline or ClickHouse sink takes the rows.
 */
export function resolveRawTexts(rows: WriteRow[], page: Buffer | undefined): void {
  for (const r of rows) {
    const start = r[W.raw];
    if (typeof start !== "number") continue;
    if (!page) throw new Error("a raw record staged as page offsets without its page");
    r[W.raw] = page.toString("utf8", start, r[W.rawEnd] as number);
    r[W.rawEnd] = null;
  }
}

/**
 * The write worker's counterpart of `resolveRawTexts`: each raw record staged as page
 * offsets becomes a view of the page's bytes, which the call statements bind as a blob
 * and store as text (`CAST(? AS TEXT)`: the same bytes, stored as TEXT). Decoding 1 KB of
 * UTF-8 into a string only for better-sqlite3 to measure and encode it back cost about
 * 3 µs a call of the worker. The bytes are the text only when they are valid UTF-8: a
 * page that is not (rare: a record with invalid UTF-8) is decoded as before, so that
 * record is stored with U+FFFD exactly as the decoding paths store it.
 */
export function resolveRawBytes(rows: WriteRow[], page: Buffer): void {
  if (!isUtf8(page)) return resolveRawTexts(rows, page);
  for (const r of rows) {
    const start = r[W.raw];
    if (typeof start !== "number") continue;
    r[W.raw] = page.subarray(start, r[W.rawEnd] as number);
    r[W.rawEnd] = null;
  }
}

/** WAL after which the write worker's connection checkpoints: 64 MB, counted in the file's pages. */
const BACKFILL_WAL_AUTOCHECKPOINT_BYTES = 64 * 1024 * 1024;

/** The write worker's connection settings (lib/sync/write-worker.ts; bench/sync-writer.ts times them). */
export function tuneForBackfill(sqlite: Database.Database): void {
  // A backfill whose session ids follow time appends at the ends of the B-trees: a small
  // cache does as well as the default 64 MB and keeps the syncing process's memory down.
  // Ids in random order rewrite leaves anywhere in the session index: the write worker
  // then grows the cache with the index and writes larger transactions (scattered-keys.ts,
  // docs/decisions/0027).
  sqlite.pragma("cache_size = -16384");
  // Checkpoint every 64 MB of WAL instead of every 1,000 pages (SQLite's default). A
  // transaction can rewrite many leaf pages of the (app_pk, session_id) index (wherever
  // session ids do not follow time), and each checkpoint copies every page written since
  // the last one and syncs both files: at the default, one checkpoint per transaction. At
  // 64 MB a page rewritten by ten transactions is copied once. Durability is unchanged: a
  // committed transaction is in the WAL either way, and the next connection recovers it
  // (decision 0007 §13).
  const pageSize = sqlite.pragma("page_size", { simple: true }) as number;
  sqlite.pragma(`wal_autocheckpoint = ${Math.ceil(BACKFILL_WAL_AUTOCHECKPOINT_BYTES / pageSize)}`);
  // Foreign keys are not checked: this connection only inserts participants of the call it
  // has just written, and calls of an app whose removal waits for this sync's lock
  // (removeApp). The checks cost a parent lookup per row, about 2 µs per call.
  sqlite.pragma("foreign_keys = OFF");
}

/** Statuses after which the platform no longer changes a call on its own. */
export function isFinalStatus(status: string | null): boolean {
  return status !== "ongoing" && status !== "initiated";
}

const b = (v: boolean) => (v ? 1 : 0);

export function extraParticipantJson(raw: unknown): string | null {
  if (!raw || typeof raw !== "object") return null;
  let extra: Record<string, unknown> | null = null;
  // for-in walks the object's own keys here (a parsed JSON object inherits none) without
  // allocating a key array.
  for (const k in raw) {
    if (isKnownParticipantKey(k)) continue;
    extra ??= {};
    extra[k] = (raw as Record<string, unknown>)[k];
  }
  return extra ? JSON.stringify(extra) : null;
}

/** A run's counters: in its summary, on its sync_runs row, in the runs view. */
export interface SyncCounts {
  pages: number;
  fetched: number;
  inserted: number;
  updated: number;
  unchanged: number;
  skipped: number;
  /** Ongoing calls re-fetched one by one. */
  refreshed: number;
}

/** A running sync's counters and resume point, as its sync_runs row keeps them. */
export interface SyncProgress extends SyncCounts {
  /** The page size the platform served: the unit of committedPage. */
  perPage: number;
  /** The page through which the first pass is committed (null: not resumable by page). */
  committedPage: number | null;
  announcedTotal: number | null;
}

/** Writes a run's progress to its sync_runs row (whichever warehouse the calls go to). */
export function progressWriter(sqlite: Database.Database): (runPk: number, p: SyncProgress) => void {
  const st = sqlite.prepare(
    `UPDATE sync_runs SET pages = ?, fetched = ?, inserted = ?, updated = ?, unchanged = ?, skipped = ?, refreshed = ?,
       per_page = ?, committed_page = ?, announced_total = ? WHERE pk = ?`,
  );
  return (runPk, p) => {
    st.run(p.pages, p.fetched, p.inserted, p.updated, p.unchanged, p.skipped, p.refreshed, p.perPage, p.committedPage, p.announcedTotal, runPk);
  };
}

export interface WriteCounts {
  inserted: number;
  updated: number;
}

export interface BatchResult extends WriteCounts {
  refused: Array<{ sessionId: string; reason: string }>;
  /** Time inside the write transactions. */
  ms: number;
}

/** A constraint or trigger refusing one record, as opposed to a database that is unusable. */
function isRecordLevelError(err: unknown): boolean {
  if (!(err instanceof Error) || err.name !== "SqliteError") return false;
  const code = String((err as { code?: string }).code ?? "");
  return code.startsWith("SQLITE_CONSTRAINT") || code === "SQLITE_ERROR" || code === "SQLITE_MISMATCH" || code === "SQLITE_TOOBIG";
}

/**
 * A call row as the sync writes it (parameters: see writeOne). has_recording keeps a
 * recording a webhook reported before the sync; the probe for one is left out when the
 * app has no recordings at all (checked in each write transaction, so no webhook can
 * add one between the check and the insert). `raw` is bound as text or, from the write
 * worker, as the record's UTF-8 bytes (`resolveRawBytes`); either way it is stored as text.
 */
const insertCall = (probe: boolean) => `INSERT INTO calls (app_pk, session_id, mid, type, mode, status, initiator, receiver, receiver_type,
    initiated_at, started_at, ended_at, start_at, platform_has_recording, has_recording,
    total_audio_minutes, total_video_minutes, total_duration_minutes, duration_seconds, total_participants,
    source, content_hash, raw, first_seen_ms, updated_ms)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
    ${probe ? "? OR EXISTS (SELECT 1 FROM recordings r WHERE r.app_pk = ? AND r.session_id = ?)" : "?"},
    ?, ?, ?, ?, ?, 'sync', ?, CAST(? AS TEXT), ?, ?)`;

/**
 * Participant rows go in INSERTs of up to this many rows, those of consecutive calls
 * together (the rows waiting are inserted before a call is updated, and at the end of the
 * transaction). Each statement run costs better-sqlite3's call and argument handling and
 * SQLite's reset and VDBE setup; per row, the B-tree insert is the same as with one
 * statement per row, in the same order. (A row trigger on the table would make SQLite
 * stage every multi-row INSERT in a temporary table first, and the one that logged
 * inserts told calls apart by `last_insert_rowid()`: migration 0020 dropped it.)
 */
const MAX_PARTICIPANT_ROWS_PER_STATEMENT = 32;

const PARTICIPANT_ROW = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
const insertParticipantRows = (k: number) => `INSERT INTO call_participants (call_pk, app_pk, seq, uid, state, is_joined, total_audio_minutes,
    total_video_minutes, total_duration_minutes, device_id, joined_at, left_at, mid, raw)
  VALUES ${Array.from({ length: k }, () => PARTICIPANT_ROW).join(", ")}`;

/**
 * Logs a call for the analytics store's readers (db/schema/analytics.ts): an entry naming
 * it unless the newest entry already does. Parameters: the call's pk, twice. No trigger
 * logs a participant insert (migration 0020, docs/decisions/0025): whoever inserts
 * participants of a call it did not insert in the same transaction runs this, as
 * CallWriter does for every call it updates. A new call needs no entry: readers find it
 * by pk, its participants with it.
 */
export const LOG_CALL_CHANGE =
  "INSERT INTO analytics_changes (call_pk) SELECT ? WHERE (SELECT call_pk FROM analytics_changes ORDER BY seq DESC LIMIT 1) IS NOT ?";

export interface CallWriterOptions {
  /** Participant rows per INSERT (default 32, several calls' rows together); 1 writes each row by its own statement. */
  maxParticipantRowsPerStatement?: number;
}

export class CallWriter {
  private readonly lookup: Statement<[number, string], { content_hash: string | null; source: string; status: string | null }>;
  private readonly upsert: Statement<unknown[], { pk: number }>;
  private readonly insertNew: Statement<unknown[]>;
  private readonly insertNewNoProbe: Statement<unknown[]>;
  private readonly appHasRecordings: Statement<[number], number>;
  /** Whether the app had recordings when the current write transaction began. */
  private probeRecordings = true;
  private readonly deleteParticipants: Statement<[number]>;
  private readonly logChange: Statement<[number, number]>;
  /** By row count k (1..maxParticipantRows): one INSERT of k participant rows, prepared when first needed. */
  private readonly insertParticipants: Array<Statement<unknown[]> | undefined> = [];
  private readonly maxParticipantRows: number;
  private readonly countCalls: Statement<[number], number>;
  private readonly progress: (runPk: number, p: SyncProgress) => void;
  private readonly ongoing: Statement<[number], string>;
  private readonly writeBatch: Transaction<(batch: Iterable<WriteRow>) => WriteCounts>;
  private lastStamp = 0;
  /** Participant rows of the transaction's calls not inserted yet: their parameters, and how many rows. */
  private participantParams: unknown[] = [];
  private participantRows = 0;

  constructor(
    private readonly db: Db,
    private readonly appPk: number,
    options: CallWriterOptions = {},
  ) {
    this.maxParticipantRows = Math.max(1, Math.floor(options.maxParticipantRowsPerStatement ?? MAX_PARTICIPANT_ROWS_PER_STATEMENT));
    const sqlite = db.$client;
    this.lookup = sqlite.prepare("SELECT content_hash, source, status FROM calls WHERE app_pk = ? AND session_id = ?");
    this.countCalls = sqlite.prepare<[number], number>("SELECT count(*) FROM calls WHERE app_pk = ?").pluck();
    this.ongoing = sqlite.prepare<[number], string>("SELECT session_id FROM calls WHERE app_pk = ? AND status = 'ongoing'").pluck();
    // The common case of a backfill, a call not stored yet: a plain insert (no RETURNING,
    // no update clause); a conflict changes nothing and falls through to the upsert.
    this.insertNew = sqlite.prepare(`${insertCall(true)} ON CONFLICT (app_pk, session_id) DO NOTHING`);
    this.insertNewNoProbe = sqlite.prepare(`${insertCall(false)} ON CONFLICT (app_pk, session_id) DO NOTHING`);
    this.appHasRecordings = sqlite.prepare<[number], number>("SELECT EXISTS (SELECT 1 FROM recordings WHERE app_pk = ?)").pluck();
    this.upsert = sqlite.prepare<unknown[], { pk: number }>(
      `${insertCall(true)}
       ON CONFLICT (app_pk, session_id) DO UPDATE SET
         mid = excluded.mid, type = excluded.type, mode = excluded.mode, status = excluded.status,
         initiator = excluded.initiator, receiver = excluded.receiver, receiver_type = excluded.receiver_type,
         initiated_at = excluded.initiated_at, started_at = excluded.started_at, ended_at = excluded.ended_at,
         start_at = excluded.start_at, platform_has_recording = excluded.platform_has_recording,
         has_recording = excluded.has_recording, total_audio_minutes = excluded.total_audio_minutes,
         total_video_minutes = excluded.total_video_minutes, total_duration_minutes = excluded.total_duration_minutes,
         duration_seconds = excluded.duration_seconds, total_participants = excluded.total_participants,
         source = 'sync', content_hash = excluded.content_hash, raw = excluded.raw, updated_ms = excluded.updated_ms
       RETURNING pk`,
    );
    this.deleteParticipants = sqlite.prepare("DELETE FROM call_participants WHERE call_pk = ?");
    this.logChange = sqlite.prepare(LOG_CALL_CHANGE);
    this.progress = progressWriter(sqlite);
    this.writeBatch = sqlite.transaction((batch: Iterable<WriteRow>) => {
      // One stamp per batch (first_seen_ms / updated_ms), strictly increasing.
      const now = Math.max(Date.now(), this.lastStamp + 1);
      this.lastStamp = now;
      this.probeRecordings = this.appHasRecordings.get(this.appPk) === 1;
      const counts: WriteCounts = { inserted: 0, updated: 0 };
      this.participantParams = [];
      this.participantRows = 0;
      for (const p of batch) {
        if (this.writeOne(p, now)) counts.inserted++;
        else counts.updated++;
      }
      this.flushParticipants();
      return counts;
    });
  }

  storedCount(): number {
    return this.countCalls.get(this.appPk) ?? 0;
  }

  ongoingSessionIds(): string[] {
    return this.ongoing.all(this.appPk);
  }

  find(sessionId: string): Existing | undefined {
    const row = this.lookup.get(this.appPk, sessionId);
    return row ? { hash: row.content_hash, source: row.source, status: row.status } : undefined;
  }

  /** Lookups of one page in one read transaction (cheaper than one implicit transaction each). */
  findMany(sessionIds: string[]): Array<Existing | undefined> {
    const out: Array<Existing | undefined> = [];
    const sqlite = this.db.$client;
    sqlite.transaction(() => {
      for (const id of sessionIds) out.push(this.find(id));
    })();
    return out;
  }

  /** A running sync's counters and resume point, on its sync_runs row. */
  saveProgress(runPk: number, p: SyncProgress): void {
    this.progress(runPk, p);
  }

  write(batch: Iterable<WriteRow>): WriteCounts {
    return this.writeImmediate(batch);
  }

  /**
   * One write transaction, begun IMMEDIATE: it takes the write lock before its first read.
   * A deferred transaction reads first (the recordings probe) and must then upgrade its
   * read lock; SQLite never runs the busy handler for that upgrade (two upgrading readers
   * would wait on each other forever), so any other writer of the file at that moment (the
   * sync's own lease renewal, a webhook, another process) failed the sync at once with
   * "database is locked" whatever the busy timeout. Begun IMMEDIATE, it waits for the
   * busy timeout like any other writer (docs/decisions/0008, issue 18).
   */
  private writeImmediate(batch: Iterable<WriteRow>): WriteCounts {
    return this.writeBatch.immediate(batch);
  }

  /**
   * Writes a batch in one transaction; if the database refuses it (a constraint), writes
   * the calls one by one and reports the refused ones instead of failing the sync.
   */
  writeTolerant(batch: WriteRow[]): BatchResult {
    const t0 = performance.now();
    try {
      return { ...this.writeImmediate(batch), refused: [], ms: performance.now() - t0 };
    } catch (err) {
      if (!isRecordLevelError(err)) throw err;
      const out: BatchResult = { inserted: 0, updated: 0, refused: [], ms: 0 };
      for (const p of batch) {
        try {
          const c = this.writeImmediate([p]);
          out.inserted += c.inserted;
          out.updated += c.updated;
        } catch (one) {
          if (!isRecordLevelError(one)) throw one;
          out.refused.push({ sessionId: String(p[W.sessionId]), reason: `warehouse refused the record: ${(one as Error).message}` });
        }
      }
      out.ms = performance.now() - t0;
      return out;
    }
  }

  /**
   * Statements are run with their parameters spread as arguments, not passed as one array:
   * better-sqlite3 reads an array element by element through a generic property lookup,
   * about 2 µs a call over a call's 26 and its participants' 14 each.
   *
   * The call statements' parameters in column order: W's positions 0–19,
   * platform_has_recording, then (`probe`) the recording probe's app and sessionId, then
   * the two stamps.
   */
  private callParams(r: WriteRow, now: number, probe: boolean): unknown[] {
    const app = this.appPk;
    // Two literals, not one array grown by push: this runs for every call written.
    return probe
      ? [app, r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[12], app, r[0], r[13], r[14], r[15], r[16], r[17], r[18], r[19], now, now]
      : [app, r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[12], r[13], r[14], r[15], r[16], r[17], r[18], r[19], now, now];
  }

  /** Returns true when the call was inserted, false when an existing row was updated. */
  private writeOne(r: WriteRow, now: number): boolean {
    const app = this.appPk;
    let pk: number;
    let inserted: boolean;
    const probe = this.probeRecordings;
    const fresh = (probe ? this.insertNew : this.insertNewNoProbe).run(...this.callParams(r, now, probe));
    if (fresh.changes === 1) {
      pk = Number(fresh.lastInsertRowid);
      inserted = true;
    } else {
      // Stored already, possibly earlier in this very batch (a call staged twice because it
      // changed between two pages): an update either way. Its earlier rows, if still
      // waiting, go in first, so that the delete below replaces them.
      this.flushParticipants();
      pk = this.upsert.get(...this.callParams(r, now, true))!.pk;
      // An updated row (a webhook-made one included) may hold participants under this pk;
      // a row just inserted cannot (AUTOINCREMENT never reuses a pk).
      this.deleteParticipants.run(pk);
      // No trigger logs the participant rows inserted next (LOG_CALL_CHANGE): the call is
      // logged here, unless its update or the delete just did.
      this.logChange.run(pk, pk);
      inserted = false;
    }
    const n = r[W.participantCount] as number;
    for (let j = 0, o = W.parts; j < n; j++, o += PART_WIDTH) {
      this.participantParams.push(pk, app, r[o], r[o + 1], r[o + 2], r[o + 3], r[o + 4], r[o + 5], r[o + 6], r[o + 7], r[o + 8], r[o + 9], r[o + 10], r[o + 11]);
      if (++this.participantRows === this.maxParticipantRows) this.flushParticipants();
    }
    return inserted;
  }

  /** Inserts the participant rows waiting, in one statement (rows of several calls, in their order). */
  private flushParticipants(): void {
    const k = this.participantRows;
    if (k === 0) return;
    (this.insertParticipants[k] ??= this.db.$client.prepare(insertParticipantRows(k))).run(...this.participantParams);
    this.participantParams = [];
    this.participantRows = 0;
  }
}
