import type Database from "better-sqlite3";
import type { Statement, Transaction } from "better-sqlite3";
import type { Db } from "@/db/client";
import { PART_WIDTH, W, type Existing, type WriteRow } from "./pending-rows";

/**
 * The warehouse side of the sync: classifies each parsed record against what is stored
 * (new / changed / unchanged, by a hash of the raw record: pending-rows.ts) and writes
 * pending records in large transactions with statements prepared once. Upserts are idempotent, so a run
 * killed between two transactions and started again converges.
 */

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
