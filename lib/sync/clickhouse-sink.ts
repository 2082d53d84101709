import { isUtf8 } from "node:buffer";
import { once } from "node:events";
import { PassThrough } from "node:stream";
import type { Db } from "@/db/client";
import type { ClickHouse } from "@/lib/clickhouse/client";
import { ensureClickHouseSchema } from "@/lib/clickhouse/ensure";
import { Writer } from "@/lib/clickhouse/row-binary";
import { localName, qualified } from "@/lib/clickhouse/schema";
import { raw, sql } from "@/lib/clickhouse/sql";
import { WRITE_V1_FACTS } from "@/lib/clickhouse/fact-schema-switch";
import { thousandths } from "@/lib/clickhouse/rows";
import type { CallStateV2 } from "@/lib/clickhouse/rows-v2";
import { CALL_RAW } from "@/lib/clickhouse/schema-v2";
import { processWriterV2, type CallChangeV2, type CallWriterV2, type StoredCallV2 } from "@/lib/clickhouse/writer-v2";
import { CALL_ROW_COLUMNS, writeCallRow } from "./clickhouse-call-row";
import type { StoredCalls } from "./stored-calls";
import type { WriteSink } from "./write-sink";
import { type Existing, type PendingCall } from "./pending-rows";
import type { BatchResult, SyncProgress } from "./writer";
import { runProgressWriter } from "./run-record";

/**
 * The sync in ClickHouse mode: calls and their participants go to ClickHouse's `calls`
 * table (lib/clickhouse/schema.ts), and nothing of them to SQLite, so that the warehouse
 * can outgrow one SQLite file. How a run tells new / changed / unchanged without a local
 * copy (docs/decisions/0015-clickhouse-live-paths.md):
 *
 * - A first backfill (no row of the app in ClickHouse) asks nothing: every call is new.
 * - Otherwise each page asks ClickHouse once for the stored content hash, source and status
 *   of its sessionIds (the table's key is (app_pk, session_id), so that is a primary-key
 *   read). An unchanged call is not written again; a new or changed one is inserted as a
 *   new version.
 * - Correctness does not depend on that answer: every write carries a version (a stamp
 *   that grows with each insert), and the ReplacingMergeTree keeps the highest version of a
 *   call, whose participants live in the same row. A run killed half way and run again
 *   writes the same calls again, and they collapse to one version each.
 *
 * One insert per committed batch (ClickHouse wants few large inserts: every insert is a
 * part to merge), streamed while the sync fetches and parses the batch's pages: each call
 * is encoded as it is staged and nothing of the batch is held (decision 0007 §7: rows held
 * until a commit are promoted and cost old-space GC).
 *
 * Each call keeps the arrival ordinal it was first stored with (`arrival`, looked up with
 * its first_seen_ms); a new call takes the next one of this process's arrival clock, in
 * the order the sync stages calls — the order in which SQLite's pk would number them, so
 * that rows with equal sort keys list in the same order in both modes (decision 0014 §10).
 *
 * Schema v2 (issue 25; lib/clickhouse/writer-v2.ts) is written beside v1 while the reports
 * read v1, and alone once WRITE_V1_FACTS (lib/clickhouse/fact-schema-switch.ts) is off:
 * each chunk of staged calls becomes one v2 write (cancel rows of the stored states, new
 * states), chained in order; a commit resolves once v1's insert and every v2 write landed.
 * Stored calls are then found in v2's `call_raw`, and the stored states a page looks up
 * that did not land whole (a run killed between inserts) are completed there and then.
 */

let lastArrival = 0;

/**
 * The next arrival ordinal of this process: the clock's microsecond-scaled millisecond
 * (`Date.now() × 1000`), or one more than the last when calls come faster than that —
 * strictly increasing for every sink of the process (two apps syncing at once never share
 * one), after every earlier run (the clock moves on), and above every copied SQLite pk.
 * A safe integer until the year 2255.
 */
export function nextArrival(): number {
  lastArrival = Math.max(Date.now() * 1000, lastArrival + 1);
  return lastArrival;
}

interface OpenInsert {
  body: PassThrough;
  done: Promise<void>;
  /** The version of every call in this insert. */
  stamp: number;
  ids: Set<string>;
}

interface StoredRow {
  session_id: string;
  content_hash: string | null;
  source: string;
  status: string | null;
  first_seen_ms: number;
  arrival: number;
  deleted: number;
}

/** A call of the current batch known to be stored (looked up, or staged before): what its next version keeps. */
interface Known {
  firstSeen: number;
  arrival: number;
}

/** Calls per v2 write: a few HTTP requests per shard each; the lists in their queries go in pieces that fit a query. */
const V2_CHUNK = 5_000;

export interface ClickHouseCallsOptions {
  /** Write schema v1's `calls` too (default: WRITE_V1_FACTS). */
  writeV1Facts?: boolean;
  /** The v2 writer (default: the process's, processWriterV2). */
  writerV2?: () => Promise<CallWriterV2>;
}

export class ClickHouseCalls implements StoredCalls, WriteSink {
  readonly kind = "clickhouse" as const;
  /** Calls of the current batch known to be stored (looked up, or staged before). */
  private known = new Map<string, Known>();
  private lastStamp = 0;
  /** Encoded rows of the page being staged. */
  private readonly writer = new Writer();
  /** The insert the batch is streaming into, and those ended but not committed yet. */
  private current: OpenInsert | undefined;
  private ended: Array<Promise<void>> = [];
  private counts = { inserted: 0, updated: 0 };
  /** An insert failed: nothing more is sent, and the next commit throws it. */
  private failure: Error | undefined;
  /** The run's progress on its row, in Callboard's state (the SQLite file or Postgres). */
  private readonly progress: ReturnType<typeof runProgressWriter>;
  private readonly writeV1: boolean;
  private readonly writerV2: () => Promise<CallWriterV2>;
  /** v2: stored states the pages looked up (completed where they had not landed whole), for the batch's writes. */
  private storedV2 = new Map<string, StoredCallV2 | undefined>();
  /** v2: changes staged and not yet handed to a write, and the chain of writes of this batch. */
  private pendingV2: CallChangeV2[] = [];
  private chainV2: Promise<void> = Promise.resolve();
  /** v2 writes queued or in flight (backpressure: drained() waits past one). */
  private v2Queued = 0;
  /**
   * When v2 held nothing of the app at the run's start: the calls this run wrote to it.
   * Any other call is new, and its write looks nothing up (as v1's first backfill asks nothing).
   */
  private writtenThisRun: Set<string> | undefined;

  constructor(
    private readonly ch: ClickHouse,
    db: Db,
    private readonly appPk: number,
    options: ClickHouseCallsOptions = {},
  ) {
    this.progress = runProgressWriter(db);
    this.writeV1 = options.writeV1Facts ?? WRITE_V1_FACTS;
    this.writerV2 = options.writerV2 ?? processWriterV2;
  }

  private get rawTable() {
    return raw(qualified(this.ch.placement.database, CALL_RAW.name));
  }

  private get table() {
    return raw(qualified(this.ch.placement.database, "calls"));
  }

  async storedCount(): Promise<number> {
    await ensureClickHouseSchema(); // the run's first question: migrates a ClickHouse that was down at start
    const [v2] = await this.ch.rows<{ n: number }>(sql`SELECT count() AS n FROM ${this.rawTable} WHERE app_pk = ${this.appPk}`.text);
    // v2 empty at the run's start (a first backfill): under the app's lease nothing but this run writes it.
    if (Number(v2?.n ?? 0) === 0) this.writtenThisRun ??= new Set();
    if (!this.writeV1) return Number(v2?.n ?? 0);
    const [row] = await this.ch.rows<{ n: number }>(sql`SELECT count() AS n FROM ${this.table} WHERE app_pk = ${this.appPk}`.text);
    return Number(row?.n ?? 0);
  }

  async findMany(sessionIds: string[]): Promise<Array<Existing | undefined>> {
    if (sessionIds.length === 0) return [];
    await ensureClickHouseSchema();
    const v2 = this.findManyV2(sessionIds);
    if (!this.writeV1) {
      const stored = await v2;
      return sessionIds.map((id) => {
        const s = stored.get(id);
        if (!s || s.deleted) return undefined;
        this.known.set(id, { firstSeen: s.firstSeenMs, arrival: s.arrival });
        return { hash: s.contentHash, source: s.source, status: s.status };
      });
    }
    v2.catch(() => undefined); // awaited below, after v1's answer
    const rows = await this.ch.rows<StoredRow>(
      sql`SELECT session_id, argMax(content_hash, version) AS content_hash, argMax(source, version) AS source,
            argMax(status, version) AS status, argMax(first_seen_ms, version) AS first_seen_ms, argMax(arrival, version) AS arrival,
            argMax(deleted, version) AS deleted
          FROM ${this.table} WHERE app_pk = ${this.appPk} AND session_id IN ${sessionIds} GROUP BY session_id`.text,
    );
    const byId = new Map<string, StoredRow>();
    for (const r of rows) if (Number(r.deleted) === 0) byId.set(r.session_id, r);
    const stored = await v2;
    return sessionIds.map((id) => {
      const r = byId.get(id);
      if (!r) return undefined;
      // Unchanged only if v2 holds the same record too: a run killed between v1's insert and
      // v2's write left v1 ahead, and the call must be written again for v2 to have it.
      const s = stored.get(id);
      if (!s || s.deleted || s.contentHash !== r.content_hash || s.source !== r.source) {
        this.known.set(id, { firstSeen: Number(r.first_seen_ms), arrival: Number(r.arrival) });
        return { hash: null, source: r.source, status: r.status };
      }
      this.known.set(id, { firstSeen: Number(r.first_seen_ms), arrival: Number(r.arrival) });
      return { hash: r.content_hash, source: r.source, status: r.status };
    });
  }

  /**
   * v2's stored states of a page's calls, kept for the batch's writes; those whose own
   * change did not land whole (a writer killed between its inserts) are completed now, so
   * that a call found unchanged (and not written again) is counted right too.
   */
  private async findManyV2(sessionIds: string[]): Promise<Map<string, StoredCallV2 | undefined>> {
    // After the writes in flight: their states are what is stored, and theirs to complete, not ours.
    await this.chainV2;
    const writer = await this.writerV2();
    const stored = await writer.lookup(this.appPk, sessionIds);
    await writer.complete(this.appPk, stored.values());
    for (const [id, s] of stored) this.storedV2.set(id, s);
    return stored;
  }

  async ongoingSessionIds(): Promise<string[]> {
    // The inner scan finds calls that were ever stored as ongoing (few), on each shard's own
    // table (an IN subquery over the Distributed table would be distributed twice); the outer
    // query keeps those whose newest version still is.
    await ensureClickHouseSchema();
    const local = raw(qualified(this.ch.placement.database, localName(this.ch.placement, this.writeV1 ? "calls" : CALL_RAW.name)));
    const table = this.writeV1 ? this.table : this.rawTable;
    const rows = await this.ch.rows<{ session_id: string }>(
      sql`SELECT session_id FROM ${table}
          WHERE app_pk = ${this.appPk} AND session_id IN (SELECT session_id FROM ${local} WHERE app_pk = ${this.appPk} AND status = 'ongoing')
          GROUP BY session_id HAVING argMax(status, version) = 'ongoing' AND argMax(deleted, version) = 0`.text,
    );
    return rows.map((r) => r.session_id);
  }

  stage(calls: PendingCall[], page?: Buffer): void {
    // Raw records left in the page are copied from its bytes (decoded only where the page is not valid UTF-8).
    const pageIsUtf8 = page !== undefined && isUtf8(page);
    for (const p of calls) {
      if (this.failure) return; // the next commit reports it
      const id = p.call.sessionId;
      if (!this.writeV1) {
        this.stageV2(p, page);
        continue;
      }
      // A later record of a call already in this insert goes into a new insert with a
      // higher version, so that it wins (two rows of one insert would share a version).
      if (this.current?.ids.has(id)) {
        this.flushWriter();
        this.endInsert();
      }
      const insert = (this.current ??= this.openInsert());
      let known = this.known.get(id);
      if (known === undefined) {
        known = { firstSeen: insert.stamp, arrival: nextArrival() };
        this.known.set(id, known);
        this.counts.inserted++;
      } else {
        this.counts.updated++;
      }
      insert.ids.add(id);
      writeCallRow(this.writer, this.appPk, p, page, pageIsUtf8, insert.stamp, known.firstSeen, known.arrival);
      this.pendingV2.push(changeOf(this.appPk, p, page, insert.stamp, known.firstSeen, known.arrival));
    }
    this.flushWriter();
    if (this.pendingV2.length >= V2_CHUNK) this.writeV2();
  }

  /** A call of a v2-only sync: its version, first sighting and arrival kept from what is stored. */
  private stageV2(p: PendingCall, page: Buffer | undefined): void {
    const id = p.call.sessionId;
    const stamp = Math.max(Date.now(), this.lastStamp + 1);
    this.lastStamp = stamp;
    let known = this.known.get(id);
    if (known === undefined) {
      known = { firstSeen: stamp, arrival: nextArrival() };
      this.known.set(id, known);
      this.counts.inserted++;
    } else {
      this.counts.updated++;
    }
    this.pendingV2.push(changeOf(this.appPk, p, page, stamp, known.firstSeen, known.arrival));
    if (this.pendingV2.length >= V2_CHUNK) this.writeV2();
  }

  /**
   * Hands the staged changes to one v2 write, after the writes before it (a call changed
   * twice in a batch is written in order). Each change goes above its stored version (raiseVersion).
   */
  private writeV2(): void {
    const batch = this.pendingV2;
    if (batch.length === 0) return;
    this.pendingV2 = [];
    const known = this.storedV2;
    this.v2Queued++;
    this.chainV2 = this.chainV2.then(async () => {
      if (this.failure) return;
      const writer = await this.writerV2();
      // What the pages looked up, and what earlier writes of this run stored.
      const given = new Map<string, StoredCallV2 | undefined>();
      const written = this.writtenThisRun;
      for (const c of batch) {
        if (known.has(c.sessionId)) given.set(c.sessionId, known.get(c.sessionId));
        else if (written && !written.has(c.sessionId)) given.set(c.sessionId, undefined);
      }
      const result = await writer.write(this.appPk, batch, given);
      for (const [id, s] of result.stored) {
        known.set(id, s);
        written?.add(id);
      }
    }).catch((err: unknown) => {
      this.failure ??= err instanceof Error ? err : new Error(String(err));
    }).finally(() => {
      this.v2Queued--;
    });
  }

  /** What this page encoded goes to the insert in one piece (a write per row would be a syscall chunk each). */
  private flushWriter(): void {
    if (this.writer.pos > 0 && this.current) this.current.body.write(this.writer.take());
  }

  /**
   * When ClickHouse takes the rows slower than the sync parses them, the sync waits here
   * (backpressure) instead of buffering up to a whole batch in this process.
   */
  async drained(): Promise<void> {
    // v2: at most one chunk written while the next fills (the changes waiting are held here).
    if (this.v2Queued > 1) await this.chainV2;
    const insert = this.current;
    if (!insert?.body.writableNeedDrain) return;
    // A failing insert never drains: its end (done) releases the wait too.
    await Promise.race([once(insert.body, "drain").catch(() => undefined), insert.done]);
  }

  /** Ends the batch's insert(s); resolves once ClickHouse has them. */
  async commit(): Promise<BatchResult> {
    if (this.current) this.endInsert();
    this.writeV2();
    const inserts = this.ended;
    const counts = this.counts;
    const v2 = this.chainV2;
    this.ended = [];
    this.counts = { inserted: 0, updated: 0 };
    this.known = new Map();
    this.storedV2 = new Map();
    const t0 = performance.now();
    await Promise.all([...inserts, v2]);
    if (this.failure) throw this.failure;
    return { ...counts, refused: [], ms: performance.now() - t0 };
  }

  /** A new insert, streamed while the batch fills; its version is a stamp that only grows in this process. */
  private openInsert(): OpenInsert {
    const stamp = Math.max(Date.now(), this.lastStamp + 1);
    this.lastStamp = stamp;
    // Up to 8 MB in flight before the sync waits (a page is about 3 MB).
    const body = new PassThrough({ highWaterMark: 8 << 20 });
    body.on("error", () => undefined); // a failed insert destroys its body: the failure is reported by commit
    const done = ensureClickHouseSchema()
      .then(() => this.ch.insertStream("calls", body, { format: "RowBinary", columns: CALL_ROW_COLUMNS }))
      .catch((err: unknown) => {
        this.failure ??= err instanceof Error ? err : new Error(String(err));
        body.destroy();
      });
    return { body, done, stamp, ids: new Set() };
  }

  private endInsert(): void {
    const insert = this.current;
    if (!insert) return;
    this.current = undefined;
    insert.body.end();
    this.ended.push(insert.done);
  }

  saveProgress(runPk: number, counts: SyncProgress): void {
    // Advisory: the run's final row is written by the sync itself, after close().
    this.progress.save(runPk, counts);
  }

  async close(): Promise<void> {
    // Only after a failed run is an insert still open: what it carried is not committed.
    this.current?.body.destroy();
    this.current = undefined;
    // The run's final row is written after this: no progress write may land behind it.
    await this.progress.settled();
  }
}

/** A staged call as a v2 change: its state (minutes in thousandths, participants with their details) and raw record. */
function changeOf(appPk: number, p: PendingCall, page: Buffer | undefined, version: number, firstSeenMs: number, arrival: number): CallChangeV2 {
  const c = p.call;
  const raw = p.rawJson ?? (page && p.rawStart !== undefined && p.rawEnd !== undefined ? page.toString("utf8", p.rawStart, p.rawEnd) : null);
  const next: CallStateV2 = {
    appPk, sessionId: c.sessionId, version, startAt: c.startAt, type: c.type, mode: c.mode, status: c.status, receiverType: c.receiverType,
    platformHasRecording: c.hasRecording, audioX1000: thousandths(c.totalAudioMinutes), videoX1000: thousandths(c.totalVideoMinutes),
    durationX1000: thousandths(c.totalDurationMinutes), durationSeconds: c.durationSeconds, totalParticipants: c.totalParticipants,
    initiatedAt: c.initiatedAt, startedAt: c.startedAt, endedAt: c.endedAt, initiator: c.initiator, receiver: c.receiver, mid: c.mid,
    firstSeenMs, arrival, source: "sync", contentHash: p.hash,
    participants: c.participants.map((x) => ({
      seq: x.seq, uid: x.uid, isJoined: x.isJoined, audioX1000: thousandths(x.totalAudioMinutes), videoX1000: thousandths(x.totalVideoMinutes),
      durationX1000: thousandths(x.totalDurationMinutes), state: x.state, deviceId: x.deviceId, joinedAt: x.joinedAt, leftAt: x.leftAt, mid: x.mid,
      raw: p.participantExtras[x.seq] ?? null,
    })),
  };
  return { sessionId: c.sessionId, version, next, raw, raiseVersion: true };
}
