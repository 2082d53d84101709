import { parseCallRecord } from "@/lib/platform/call-record";
import { rawRecordText, type RawRecords } from "@/lib/platform/calls-client";
import type { CallFields } from "@/lib/platform/page-reader";
import type { PageCursor } from "./resume";
import type { StoredCalls } from "./stored-calls";
import type { SyncSummary } from "./summary";
import type { WriteSink } from "./write-sink";
import { fieldsRow } from "./write-row";
import { contentHash, extraParticipantJson, isFinalStatus, toWriteRow, W, type Existing, type PendingCall, type WriteRow } from "./pending-rows";

const MAX_REASONS = 100;

/**
 * Pages of sessionIds remembered for dedupe, per generation: repeats come from pages
 * shifting by a few. Two generations are kept, so a lookup covers the last 4 to 8 pages
 * in two probes (one map per page took four probes for every new call of a backfill).
 */
const DEDUPE_GENERATION_PAGES = 4;

/**
 * Per-run bookkeeping: dedupe by sessionId, classification, the staged batch.
 * Memory stays flat on a million-call backfill: repeats (new calls arriving at the top
 * shift later pages) are caught within a window of recent pages, and a repeat from
 * further back is harmless — the upsert makes it a no-op rewrite.
 */
export class RunState {
  /** sessionId → content hash of its latest sighting, for the last few pages (two generations). */
  private seen = new Map<string, string>();
  private seenBefore = new Map<string, string>();
  private pagesInGeneration = 0;
  /** Calls seen as ongoing in this run: fresh, no need to refresh them one by one. */
  readonly seenOngoing = new Set<string>();
  /** Calls staged for the next commit (their stored state is stale: no lookups for them). */
  private staged = new Set<string>();
  /** No calls stored for the app when the run started: no lookups needed (asked at the first page). */
  private startedEmpty: boolean | undefined;

  /** The batch being written (at most one in flight). */
  private inflight: Promise<void> = Promise.resolve();
  /**
   * The first commit that failed. Nothing is committed after it: with a batch missing,
   * a later one stored would put the cursor past a gap.
   */
  private failure: { error: unknown } | undefined;

  constructor(
    readonly writer: StoredCalls,
    private readonly sink: WriteSink,
    private readonly summary: SyncSummary,
    private readonly batchSize: number,
    private readonly cursor: PageCursor,
    private readonly saveProgress: () => void,
  ) {}

  skip(sessionId: string | null, reason: string): void {
    this.summary.skipped++;
    this.note(sessionId, reason);
  }

  /** Recorded in the run's reasons without counting as a skipped record. */
  note(sessionId: string | null, reason: string): void {
    if (this.summary.skippedRecords.length < MAX_REASONS) this.summary.skippedRecords.push({ sessionId, reason });
  }

  private recent(sessionId: string): string | undefined {
    return this.seen.get(sessionId) ?? this.seenBefore.get(sessionId);
  }

  /**
   * Handles one page of raw records. Returns, for the early-stop rule, whether every
   * record was already stored, final and unchanged, and the initiatedAt values in order;
   * for the convergence guard, how many records this run had already seen (the window).
   */
  async handle(
    records: unknown[],
    raw?: RawRecords,
    extras?: Array<Array<string | null> | undefined>,
  ): Promise<{ allKnown: boolean; initiated: Array<number | null>; repeated: number }> {
    const t0 = performance.now();
    if (this.pagesInGeneration++ === DEDUPE_GENERATION_PAGES) {
      this.seenBefore = this.seen;
      this.seen = new Map();
      this.pagesInGeneration = 1;
    }
    // A sink that writes flat rows (SQLite) takes records read by their fields straight
    // into rows (write-row.ts); otherwise (ClickHouse) each call is parsed whole.
    const toRows = this.sink.stageRows !== undefined;
    const fresh: Array<PendingCall | WriteRow> = [];
    const freshIds: string[] = [];
    const freshHashes: string[] = [];
    const initiated: Array<number | null> = [];
    let allKnown = records.length > 0;
    let repeated = 0;
    for (let i = 0; i < records.length; i++) {
      // A record read by its known fields (extras[i] set: see CallsPage.participantExtras).
      const byFields = extras?.[i] !== undefined;
      // The record's text as sent when the page could be sliced (cheaper, and exact): left
      // in the page's bytes, hashed there and decoded by the write side.
      const rawStart = raw?.ranges[2 * i];
      const rawEnd = raw?.ranges[2 * i + 1];
      let item: PendingCall | WriteRow | undefined;
      let id: string, hash: string, initiatedAt: number | null, status: string | null;
      if (toRows && byFields) item = fieldsRow(records[i] as CallFields, extras![i]!, rawStart!, rawEnd!);
      if (item) {
        const row = item as WriteRow;
        hash = row[W.hash] = contentHash(raw!.bytes.subarray(rawStart, rawEnd));
        id = row[W.sessionId] as string;
        initiatedAt = row[W.initiatedAt] as number | null;
        status = row[W.status] as string | null;
      } else {
        let r = parseCallRecord(records[i]);
        // Refused: parsed whole again, so that the reason is worded from the record as sent.
        if (!r.ok && byFields) r = parseCallRecord(JSON.parse(rawRecordText(raw!, i)));
        if (!r.ok) {
          this.skip(r.sessionId, r.reason);
          allKnown = false;
          continue;
        }
        const rawJson = raw ? null : JSON.stringify(r.raw);
        hash = contentHash(rawJson ?? raw!.bytes.subarray(rawStart, rawEnd));
        let participantExtras = byFields ? extras![i]! : undefined;
        if (!participantExtras) {
          const rawParticipants = Array.isArray(r.raw.participants) ? (r.raw.participants as unknown[]) : [];
          participantExtras = rawParticipants.map(extraParticipantJson);
        }
        const p: PendingCall = { call: r.call, rawJson, rawStart, rawEnd, hash, participantExtras };
        item = toRows ? toWriteRow(p) : p;
        id = r.call.sessionId;
        initiatedAt = r.call.initiatedAt;
        status = r.call.status;
      }
      const prev = this.recent(id);
      if (prev !== undefined) repeated++;
      this.seen.set(id, hash);
      if (prev === hash) continue; // the same record again (pages shifted under us)
      initiated.push(prev === undefined ? initiatedAt : null);
      if (status === "ongoing") this.seenOngoing.add(id);
      else this.seenOngoing.delete(id);
      fresh.push(item);
      freshIds.push(id);
      freshHashes.push(hash);
    }
    // What is stored, in one read transaction per page (none needed on a first backfill).
    this.startedEmpty ??= (await this.writer.storedCount()) === 0;
    const lookup = this.startedEmpty ? [] : freshIds.filter((id) => !this.staged.has(id));
    const found = lookup.length ? await this.writer.findMany(lookup) : [];
    const existing = new Map<string, Existing | undefined>();
    lookup.forEach((id, i) => existing.set(id, found[i]));
    const staging: Array<PendingCall | WriteRow> = [];
    for (let k = 0; k < fresh.length; k++) {
      const id = freshIds[k];
      const ex = existing.size ? existing.get(id) : undefined;
      if (ex && ex.hash === freshHashes[k] && ex.source === "sync") {
        this.summary.unchanged++;
        if (!isFinalStatus(ex.status)) allKnown = false;
        continue;
      }
      allKnown = false;
      // A later version of a call already staged is staged too: written after it, it wins.
      this.staged.add(id);
      staging.push(fresh[k]);
    }
    if (toRows) this.sink.stageRows!(staging as WriteRow[], raw?.bytes);
    else this.sink.stage(staging as PendingCall[], raw?.bytes);
    if (this.sink.drained) await this.sink.drained();
    this.summary.timings.parseMs += performance.now() - t0;
    if (this.staged.size >= this.batchSize) await this.flush();
    return { allKnown, initiated, repeated };
  }

  /**
   * Commits the staged calls. Waits only for the previous commit, so the caller goes on
   * fetching and parsing while this one is written (at most two batches outstanding).
   */
  async flush(): Promise<void> {
    if (this.failure) throw this.failure.error;
    const previous = this.inflight;
    if (this.staged.size > 0) {
      this.staged = new Set();
      // The pages this commit completes (the cursor moves only once it is stored).
      const mark = this.cursor.handedThrough();
      // Committed now (the sink keeps commits in order); accounted after the previous one.
      const committed = this.sink.commit();
      committed.catch(() => undefined);
      this.inflight = previous
        .then(() => committed)
        .then((r) => {
          this.summary.timings.dbMs += r.ms;
          this.summary.inserted += r.inserted;
          this.summary.updated += r.updated;
          for (const x of r.refused) this.skip(x.sessionId, x.reason);
          this.cursor.committed(mark);
          this.saveProgress();
        })
        .catch((error: unknown) => {
          this.failure ??= { error };
          throw error;
        });
      // A failure surfaces at the next flush or drain, not as an unhandled rejection.
      this.inflight.catch(() => undefined);
    }
    await previous;
  }

  /** Commits everything staged and waits until it is stored. */
  async drain(): Promise<void> {
    await this.flush();
    await this.inflight;
  }
}

