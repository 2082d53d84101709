import { parseCallRecord } from "@/lib/platform/call-record";
import type { SyncSummary } from "./sync-app";
import { contentHash, isFinalStatus, type CallWriter, type Existing, type PendingCall } from "./writer";

const MAX_REASONS = 100;

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function hashKey(hash: string): number {
  // 48 bits of the hash are plenty to tell repeats apart within a few pages.
  return Buffer.from(hash.slice(0, 8), "base64url").readUIntBE(0, 6);
}

/** Pages of sessionIds remembered for dedupe: repeats come from pages shifting by a few. */
const DEDUPE_WINDOW_PAGES = 4;

/**
 * Per-run bookkeeping: dedupe by sessionId, classification, the pending batch.
 * Memory stays flat on a million-call backfill: repeats (new calls arriving at the top
 * shift later pages) are caught within a window of recent pages, and a repeat from
 * further back is harmless — the upsert makes it a no-op rewrite.
 */
export class RunState {
  /** sessionId → 48 bits of the content hash, for the last few pages. */
  private window: Array<Map<string, number>> = [];
  /** Calls seen as ongoing in this run: fresh, no need to refresh them one by one. */
  readonly seenOngoing = new Set<string>();
  private pending = new Map<string, PendingCall>();
  /** No calls stored for the app when the run started: no lookups needed. */
  private readonly startedEmpty: boolean;

  constructor(
    readonly writer: CallWriter,
    private readonly summary: SyncSummary,
    private readonly batchSize: number,
    private readonly saveProgress: () => void,
  ) {
    this.startedEmpty = writer.storedCount() === 0;
  }

  skip(sessionId: string | null, reason: string): void {
    this.summary.skipped++;
    this.note(sessionId, reason);
  }

  /** Recorded in the run's reasons without counting as a skipped record. */
  note(sessionId: string | null, reason: string): void {
    if (this.summary.skippedRecords.length < MAX_REASONS) this.summary.skippedRecords.push({ sessionId, reason });
  }

  private recent(sessionId: string): number | undefined {
    for (const m of this.window) {
      const k = m.get(sessionId);
      if (k !== undefined) return k;
    }
    return undefined;
  }

  /**
   * Handles one page of raw records. Returns, for the early-stop rule, whether every
   * record was already stored, final and unchanged, and the initiatedAt values in order.
   */
  handle(records: unknown[]): { allKnown: boolean; initiated: Array<number | null> } {
    const t0 = performance.now();
    const page = new Map<string, number>();
    this.window.push(page);
    if (this.window.length > DEDUPE_WINDOW_PAGES) this.window.shift();
    const fresh: PendingCall[] = [];
    const initiated: Array<number | null> = [];
    let allKnown = records.length > 0;
    for (const rec of records) {
      const r = parseCallRecord(rec);
      if (!r.ok) {
        this.skip(r.sessionId, r.reason);
        allKnown = false;
        continue;
      }
      const id = r.call.sessionId;
      const rawJson = JSON.stringify(r.raw);
      const hash = contentHash(rawJson);
      const key = hashKey(hash);
      const prev = this.recent(id);
      page.set(id, key);
      if (prev === key) continue; // the same record again (pages shifted under us)
      initiated.push(prev === undefined ? r.call.initiatedAt : null);
      if (r.call.status === "ongoing") this.seenOngoing.add(id);
      else this.seenOngoing.delete(id);
      const rawParticipants = Array.isArray(r.raw.participants) ? (r.raw.participants as unknown[]) : [];
      fresh.push({ call: r.call, rawJson, hash, rawParticipants });
    }
    // What is stored, in one read transaction per page (none needed on a first backfill).
    const lookup = this.startedEmpty ? [] : fresh.filter((p) => !this.pending.has(p.call.sessionId));
    const found = lookup.length ? this.writer.findMany(lookup.map((p) => p.call.sessionId)) : [];
    const existing = new Map<string, Existing | undefined>();
    lookup.forEach((p, i) => existing.set(p.call.sessionId, found[i]));
    for (const p of fresh) {
      const id = p.call.sessionId;
      const ex = existing.get(id);
      if (ex && ex.hash === p.hash && ex.source === "sync") {
        this.summary.unchanged++;
        if (!isFinalStatus(ex.status)) allKnown = false;
        continue;
      }
      allKnown = false;
      this.pending.delete(id); // a later version replaces a queued one, at the end of the queue
      this.pending.set(id, p);
    }
    this.summary.timings.parseMs += performance.now() - t0;
    if (this.pending.size >= this.batchSize) this.flush();
    return { allKnown, initiated };
  }

  flush(): void {
    if (this.pending.size === 0) return;
    const t0 = performance.now();
    let counts;
    try {
      counts = this.writer.write(this.pending.values());
    } catch (err) {
      // One record the warehouse refuses (a constraint) must not stop the sync: write one
      // by one and skip the ones that fail, with the database's reason.
      if (!(err instanceof Error && err.name === "SqliteError") || /SQLITE_BUSY|SQLITE_FULL|SQLITE_IOERR/.test(String((err as { code?: string }).code))) throw err;
      counts = { inserted: 0, updated: 0 };
      for (const p of this.pending.values()) {
        try {
          const c = this.writer.write([p]);
          counts.inserted += c.inserted;
          counts.updated += c.updated;
        } catch (one) {
          this.skip(p.call.sessionId, `warehouse refused the record: ${errorText(one)}`);
        }
      }
    }
    this.summary.timings.dbMs += performance.now() - t0;
    this.summary.inserted += counts.inserted;
    this.summary.updated += counts.updated;
    this.pending = new Map();
    this.saveProgress();
  }
}

