import { performance } from "node:perf_hooks";
import { eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import type { AppRow } from "@/db/schema";
import { isPostgresState, tablesOf } from "@/db/state";
import { appConnection, listApps, type AppConnection } from "@/lib/apps/registry";
import { clickhouse, clickHouseConfigured } from "@/lib/clickhouse/client";
import { env } from "@/lib/config/env";
import { logger, type Logger } from "@/lib/log/logger";
import { createCallsClient, type CallsClientOptions } from "@/lib/platform/calls-client";
import { requestGate } from "@/lib/platform/rate-limit";
import { describeSyncFailure, describeWarehouseError, isWarehouseFailure } from "./failure";
import { DEFAULT_LEASE_MS, newOwnerId } from "../locks/sync-lock";
import { walkPages } from "./page-loop";
import { refreshOngoing } from "./refresh-ongoing";
import { PageCursor, type ResumePoint } from "./resume";
import { beginRun, cursorOf, finishRun, keepSyncLease, progressOf } from "./run-record";
import { RunState } from "./run-state";
import { threadCpuMs } from "./thread-cpu";
import { ClickHouseCalls, type ClickHouseCallsOptions } from "./clickhouse-sink";
import type { StoredCalls } from "./stored-calls";
import { inlineSink, workerSink, type WriteSink } from "./write-sink";
import type { SyncSummary, SyncTrigger } from "./summary";
import { CallWriter } from "./writer";

export type { SkippedRecord, SyncSummary, SyncTimings, SyncTrigger } from "./summary";

/**
 * The pull side: pages through one app's calls and upserts them into the warehouse.
 * Writes are batched across pages (a few thousand calls per transaction: SQLite is
 * ~4x faster per row in 10k-row transactions than in 100-row ones) while the next
 * pages are already being fetched. After the first complete backfill, a run may stop
 * at a full page of calls already stored, final and unchanged — only while the results
 * prove to be newest first by initiatedAt; a full reconcile runs every 24 h. A backfill
 * that failed part-way continues where it stopped (resume.ts), and a run stops an
 * upstream that does not converge (convergence.ts).
 */


export interface SyncOptions {
  trigger: SyncTrigger;
  /** Page everything (a full reconcile) even after the backfill. */
  full?: boolean;
  perPage?: number;
  signal?: AbortSignal;
  log?: Logger;
  /**
   * Where write transactions run: "auto" (default) uses a worker thread for a first
   * backfill (the app has no calls yet) and this thread otherwise.
   */
  writer?: "auto" | "inline" | "worker";
  /** ClickHouse mode: the sink's options (tests write schema v2 alone with `writeV1Facts: false`; default: WRITE_V1_FACTS). */
  clickHouse?: ClickHouseCallsOptions;
  /** Calls written per transaction (default 8,000 inline, 4,000 with the worker; per insert into ClickHouse, 50,000). */
  batchSize?: number;
  /** Pages in flight while the current one is parsed and written (default SYNC_CONCURRENCY). */
  prefetch?: number;
  /** A full reconcile is due when the last one is older than this (default 24 h). */
  fullEveryMs?: number;
  leaseMs?: number;
  /** Most ongoing calls re-fetched one by one per run (default 500). */
  maxRefresh?: number;
  /** Overrides of the Calls API client (timeouts, attempts, fetch) — tests and bench. */
  client?: Partial<CallsClientOptions>;
  /** Where to connect instead of the app's stored address and key (tests). */
  connection?: AppConnection;
  /** PLATFORM_DOMAIN (default from the environment). */
  domain?: string;
  /** Called after each page is handled (progress, tests). */
  onPage?: (info: { page: number; fetched: number }) => void;
  /**
   * Lift the bound on how far a run may page past what the platform announced on its
   * first page (`npm run sync -- --allow-growth`): for a real backfill of an app that
   * gains calls faster than the bound allows. See convergence.ts.
   */
  allowGrowth?: boolean;
  /** Start an unfinished backfill again from page 1 instead of resuming it. */
  fromStart?: boolean;
}

const DAY_MS = 24 * 60 * 60 * 1000;

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The run gave up its lock (another process took it over): it must write nothing more. */
class SyncAbort extends Error {}

function emptySummary(appId: string): SyncSummary {
  return {
    appId,
    status: "failed",
    runPk: null,
    kind: "incremental",
    pages: 0,
    fetched: 0,
    inserted: 0,
    updated: 0,
    unchanged: 0,
    skipped: 0,
    refreshed: 0,
    refreshMissing: 0,
    stoppedEarly: false,
    resumedFromPage: null,
    error: null,
    skippedRecords: [],
    durationMs: 0,
    timings: { wallMs: 0, fetchWaitMs: 0, fetchMs: 0, parseMs: 0, dbMs: 0, refreshMs: 0 },
  };
}

export async function syncApp(db: Db, app: AppRow, options: SyncOptions): Promise<SyncSummary> {
  // Postgres holds the state of several servers; their calls must then go to the one shared warehouse.
  if (isPostgresState(db) && !clickHouseConfigured()) throw new Error(`sync of app ${app.appId}: with DATABASE_URL the calls go to ClickHouse, and CLICKHOUSE_URL is not set`);
  const wallStart = performance.now();
  const log = (options.log ?? logger).child({ appId: app.appId });
  const owner = newOwnerId();
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const now = Date.now();
  const fullDue =
    options.full === true ||
    app.backfillCompletedMs === null ||
    app.lastFullSyncMs === null ||
    now - app.lastFullSyncMs >= (options.fullEveryMs ?? DAY_MS);
  const summary: SyncSummary = { ...emptySummary(app.appId), kind: fullDue ? "full" : "incremental" };

  let started: { runPk: number; resume: ResumePoint | null } | null;
  try {
    started = await beginRun(db, app, owner, leaseMs, options, summary, now);
  } catch (err) {
    // The warehouse is locked or full before anything began: nothing to keep, nothing to undo.
    if (!isWarehouseFailure(err)) throw err;
    summary.error = `sync of app ${app.appId} could not start: ${describeWarehouseError(err)}`;
    log.error({ err: summary.error }, "sync could not start");
    return summary;
  }
  if (!started) return summary; // already running elsewhere
  const { runPk, resume } = started;
  summary.runPk = runPk;
  summary.resumedFromPage = resume?.page ?? null;

  const abort = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, abort.signal]) : abort.signal;
  const lease = keepSyncLease(db, app.pk, owner, leaseMs, () => abort.abort(new SyncAbort(`lost the sync lock of app ${app.appId}`)), log);

  const elu0 = performance.eventLoopUtilization();
  const cpu0 = threadCpuMs();
  const perPage = resume?.perPage ?? options.perPage ?? 1000;
  const cursor = new PageCursor(resume?.page ?? 1, perPage);
  let sink: WriteSink | undefined;
  let state: RunState | undefined;
  try {
    const conn = options.connection ?? appConnection(app, options.domain ?? env().PLATFORM_DOMAIN);
    const concurrency = env().SYNC_CONCURRENCY;
    const client = createCallsClient({
      callsUrl: conn.callsUrl,
      apiKey: conn.apiKey,
      onBehalfOf: conn.onBehalfOf,
      appId: app.appId,
      // Every app syncing in this process shares one cap on requests in flight.
      gate: requestGate(concurrency),
      ...options.client,
    });
    // ClickHouse mode: calls go there, and nothing of them to SQLite (clickhouse-sink.ts).
    const { writer, active } = clickHouseConfigured() ? clickHouseStore(db, app.pk, options.clickHouse) : sqliteStore(db, app.pk, options, resume !== null);
    sink = active;
    const batchSize = options.batchSize ?? BATCH_SIZE[active.kind];
    const saveProgress = () => active.saveProgress(runPk, { ...progressOf(summary), ...cursorOf(cursor) });
    state = new RunState(writer, active, summary, batchSize, cursor, saveProgress);

    const pass = { appId: app.appId, perPage, prefetch: options.prefetch ?? concurrency, signal, allowGrowth: options.allowGrowth === true, onPage: options.onPage };
    const first = await walkPages(client, state, summary, { ...pass, startPage: cursor.startPage, stopAtKnown: !fullDue, cursor });
    await state.drain();
    cursor.endFirstPass();
    let pagedEverything = first.complete;
    if (resume && first.complete) {
      // The head: calls that arrived since the backfill began sit at the top of the list.
      // Without proof of the order (or of the page size) the head is walked whole.
      await walkPages(client, state, summary, { ...pass, startPage: 1, stopAtKnown: first.ordered && cursor.trusted });
      pagedEverything = true;
    }
    await state.drain();
    await refreshOngoing(client, state, summary, options.maxRefresh ?? 500, signal);
    await state.drain();

    const finished = Date.now();
    const { apps } = tablesOf(db);
    await db
      .update(apps)
      .set({
        lastSuccessfulSyncMs: finished,
        ...(pagedEverything ? { lastFullSyncMs: finished, backfillCompletedMs: app.backfillCompletedMs ?? finished } : {}),
      })
      .where(eq(apps.pk, app.pk));
    summary.status = "succeeded";
  } catch (err) {
    const reason = signal.aborted && signal.reason instanceof SyncAbort ? signal.reason : err;
    // What was fetched is kept: staged rows are committed unless the warehouse itself
    // failed (nothing more is written then) or the lock is another run's now.
    if (state && !isWarehouseFailure(reason) && !(reason instanceof SyncAbort)) {
      await state.drain().catch((e: unknown) => log.warn({ err: errorText(e) }, "could not store the calls staged before the failure"));
    }
    summary.status = "failed";
    const resumable = app.backfillCompletedMs === null && cursor.committedPage !== null && cursor.committedPage >= 1;
    summary.error = describeSyncFailure(app.appId, reason, resumable ? cursor.committedPage! + 1 : null);
    log.error({ err: summary.error }, "sync failed");
  } finally {
    lease.stop();
    summary.timings.mainBusy = performance.eventLoopUtilization(elu0).utilization;
    summary.timings.writerBusy = sink?.utilization?.();
    const cpu1 = threadCpuMs();
    if (cpu0 !== undefined && cpu1 !== undefined) summary.timings.mainCpuMs = cpu1 - cpu0;
    await sink?.close().catch(() => undefined);
    summary.timings.writerCpuMs = sink?.cpuMs?.();
    summary.timings.wallMs = summary.durationMs = performance.now() - wallStart;
    await finishRun(db, app, owner, runPk, summary, cursorOf(cursor), log);
  }
  log.info(
    {
      status: summary.status, kind: summary.kind, pages: summary.pages, fetched: summary.fetched,
      inserted: summary.inserted, updated: summary.updated, unchanged: summary.unchanged,
      skipped: summary.skipped, refreshed: summary.refreshed, ms: Math.round(summary.timings.wallMs),
      resumedFromPage: summary.resumedFromPage,
    },
    "sync finished",
  );
  return summary;
}

// Two batches can be alive at once with a worker (one being written, one filling) plus
// the copy handed over: a smaller batch keeps peak memory in bounds (~470 MB measured at
// 4,000 vs ~680 MB at 8,000) and is still ~16,000 rows per transaction. ClickHouse: one
// streamed insert per batch; 50,000 calls make fewer parts to merge than 16,000
// (ClickHouse CPU per call 22 → 18 µs measured) and nothing of a batch is held here.
// 250,000 saved another quarter of ClickHouse's CPU but tripled the receiving server's
// memory (it parses a whole insert into one block): decision 0015 §13.
const BATCH_SIZE: Record<WriteSink["kind"], number> = { worker: 4_000, inline: 8_000, clickhouse: 50_000 };

/** The SQLite warehouse: a backfill (first or resumed) writes from a worker thread; later runs change little. */
function sqliteStore(db: Db, appPk: number, options: SyncOptions, resuming: boolean): { writer: StoredCalls; active: WriteSink } {
  const writer = new CallWriter(db, appPk);
  const backfill = writer.storedCount() === 0 || resuming;
  const useWorker = options.writer === "worker" || ((options.writer ?? "auto") === "auto" && backfill);
  return { writer, active: (useWorker ? workerSink(db, appPk) : undefined) ?? inlineSink(writer) };
}

function clickHouseStore(db: Db, appPk: number, options?: ClickHouseCallsOptions): { writer: StoredCalls; active: WriteSink } {
  const calls = new ClickHouseCalls(clickhouse(), db, appPk, options);
  return { writer: calls, active: calls };
}

export interface SyncAllOptions extends Omit<SyncOptions, "connection" | "onPage"> {
  /** Only these app ids (default: every registered app). */
  appIds?: string[];
  /**
   * Leave alone an app whose last successful sync ended less than this long ago: with
   * several servers over one state, each server's schedule would otherwise sync every
   * app again right after another server did (the lease keeps them one at a time, not
   * one per interval).
   */
  skipSyncedWithinMs?: number;
}

/** Syncs every app (one after the other); one app failing never stops the others. */
export async function syncAll(db: Db, options: SyncAllOptions): Promise<SyncSummary[]> {
  const results: SyncSummary[] = [];
  const wanted = options.appIds ? new Set(options.appIds) : null;
  for (const app of await listApps(db)) {
    if (wanted && !wanted.has(app.appId)) continue;
    if (options.signal?.aborted) break;
    if (options.skipSyncedWithinMs && app.lastSuccessfulSyncMs !== null && Date.now() - app.lastSuccessfulSyncMs < options.skipSyncedWithinMs) continue;
    try {
      results.push(await syncApp(db, app, options));
    } catch (err) {
      // Only the lock or run bookkeeping can throw here (e.g. the database stayed busy).
      results.push({ ...emptySummary(app.appId), error: `sync of app ${app.appId} could not start: ${errorText(err)}` });
    }
  }
  return results;
}
