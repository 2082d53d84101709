import { isUtf8 } from "node:buffer";
import { once } from "node:events";
import { PassThrough } from "node:stream";
import type { Db } from "@/db/client";
import type { ClickHouse } from "@/lib/clickhouse/client";
import { ensureClickHouseSchema } from "@/lib/clickhouse/ensure";
import { Writer } from "@/lib/clickhouse/row-binary";
import { localName, qualified } from "@/lib/clickhouse/schema";
import { raw, sql } from "@/lib/clickhouse/sql";
import { CALL_ROW_COLUMNS, writeCallRow } from "./clickhouse-call-row";
import type { StoredCalls } from "./stored-calls";
import type { WriteSink } from "./write-sink";
import { progressWriter, type BatchResult, type Existing, type PendingCall, type SyncProgress } from "./writer";

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
  private readonly progress: (runPk: number, p: SyncProgress) => void;

  constructor(
    private readonly ch: ClickHouse,
    db: Db,
    private readonly appPk: number,
  ) {
    this.progress = progressWriter(db.$client);
  }

  private get table() {
    return raw(qualified(this.ch.placement.database, "calls"));
  }

  async storedCount(): Promise<number> {
    await ensureClickHouseSchema(); // the run's first question: migrates a ClickHouse that was down at start
    const [row] = await this.ch.rows<{ n: number }>(sql`SELECT count() AS n FROM ${this.table} WHERE app_pk = ${this.appPk}`.text);
    return Number(row?.n ?? 0);
  }

  async findMany(sessionIds: string[]): Promise<Array<Existing | undefined>> {
    if (sessionIds.length === 0) return [];
    await ensureClickHouseSchema();
    const rows = await this.ch.rows<StoredRow>(
      sql`SELECT session_id, argMax(content_hash, version) AS content_hash, argMax(source, version) AS source,
            argMax(status, version) AS status, argMax(first_seen_ms, version) AS first_seen_ms, argMax(arrival, version) AS arrival,
            argMax(deleted, version) AS deleted
          FROM ${this.table} WHERE app_pk = ${this.appPk} AND session_id IN ${sessionIds} GROUP BY session_id`.text,
    );
    const byId = new Map<string, StoredRow>();
    for (const r of rows) if (Number(r.deleted) === 0) byId.set(r.session_id, r);
    return sessionIds.map((id) => {
      const r = byId.get(id);
      if (!r) return undefined;
      this.known.set(id, { firstSeen: Number(r.first_seen_ms), arrival: Number(r.arrival) });
      return { hash: r.content_hash, source: r.source, status: r.status };
    });
  }

  async ongoingSessionIds(): Promise<string[]> {
    // The inner scan finds calls that were ever stored as ongoing (few), on each shard's own
    // table (an IN subquery over the Distributed table would be distributed twice); the outer
    // query keeps those whose newest version still is.
    await ensureClickHouseSchema();
    const local = raw(qualified(this.ch.placement.database, localName(this.ch.placement, "calls")));
    const rows = await this.ch.rows<{ session_id: string }>(
      sql`SELECT session_id FROM ${this.table}
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
    }
    this.flushWriter();
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
    const insert = this.current;
    if (!insert?.body.writableNeedDrain) return;
    // A failing insert never drains: its end (done) releases the wait too.
    await Promise.race([once(insert.body, "drain").catch(() => undefined), insert.done]);
  }

  /** Ends the batch's insert(s); resolves once ClickHouse has them. */
  async commit(): Promise<BatchResult> {
    if (this.current) this.endInsert();
    const inserts = this.ended;
    const counts = this.counts;
    this.ended = [];
    this.counts = { inserted: 0, updated: 0 };
    this.known = new Map();
    const t0 = performance.now();
    await Promise.all(inserts);
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
    try {
      this.progress(runPk, counts);
    } catch {
      /* advisory: the run's final row is written by the sync itself */
    }
  }

  async close(): Promise<void> {
    // Only after a failed run is an insert still open: what it carried is not committed.
    this.current?.body.destroy();
    this.current = undefined;
  }
}
