import { performance } from "node:perf_hooks";
import { eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { apps, syncRuns, type AppRow } from "@/db/schema";
import { appConnection, listApps, type AppConnection } from "@/lib/apps/registry";
import { env } from "@/lib/config/env";
import { logger, type Logger } from "@/lib/log/logger";
import { createCallsClient, type CallsClient, type CallsClientOptions } from "@/lib/platform/calls-client";
import { PlatformAuthError, PlatformError, PlatformNotFoundError } from "@/lib/platform/errors";
import { acquireLock, DEFAULT_LEASE_MS, newOwnerId, releaseLock, renewLock } from "./lock";
import { RunState } from "./run-state";
import { inlineSink, workerSink, type WriteSink } from "./write-sink";
import type { SyncSummary } from "./summary";
import { CallWriter } from "./writer";

export type { SkippedRecord, SyncSummary, SyncTimings } from "./summary";

/**
 * The pull side: pages through one app's calls and upserts them into the warehouse.
 * Writes are batched across pages (a few thousand calls per transaction: SQLite is
 * ~4x faster per row in 10k-row transactions than in 100-row ones) while the next
 * pages are already being fetched. After the first complete backfill, a run may stop
 * at a full page of calls already stored, final and unchanged — only while the results
 * prove to be newest first by initiatedAt; a full reconcile runs every 24 h.
 */

export type SyncTrigger = "schedule" | "cli" | "manual" | "demo" | "test";

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
  /** Calls written per transaction (default 8,000 inline, 4,000 with the worker). */
  batchSize?: number;
  /** Pages requested ahead while the current one is parsed and written (default 2). */
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
}

const DAY_MS = 24 * 60 * 60 * 1000;

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

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
    error: null,
    skippedRecords: [],
    durationMs: 0,
    timings: { wallMs: 0, fetchWaitMs: 0, fetchMs: 0, parseMs: 0, dbMs: 0, refreshMs: 0 },
  };
}

export async function syncApp(db: Db, app: AppRow, options: SyncOptions): Promise<SyncSummary> {
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

  const lock = acquireLock(db, app.pk, owner, leaseMs);
  if (!lock.acquired) {
    summary.status = "already_running";
    summary.error = `a sync of app ${app.appId} is already running (holder ${lock.owner}, since ${new Date(lock.acquiredMs).toISOString()})`;
    return summary;
  }
  if (lock.tookOverFrom) log.warn({ previousOwner: lock.tookOverFrom }, "took over an abandoned sync lock");

  // Any run still 'running' for this app belongs to a holder that is gone: we hold the lock.
  db.$client
    .prepare("UPDATE sync_runs SET status = 'failed', finished_ms = ?, error = ? WHERE app_pk = ? AND status = 'running'")
    .run(now, "interrupted: the process running this sync stopped before it finished", app.pk);

  const run = db
    .insert(syncRuns)
    .values({ appPk: app.pk, kind: summary.kind, trigger: options.trigger, status: "running", startedMs: now })
    .returning({ pk: syncRuns.pk })
    .get();
  summary.runPk = run.pk;

  const abort = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, abort.signal]) : abort.signal;
  const renewTimer = setInterval(() => {
    try {
      if (!renewLock(db, app.pk, owner, leaseMs)) abort.abort(new SyncAbort(`lost the sync lock of app ${app.appId}`));
    } catch (err) {
      log.warn({ err: errorText(err) }, "lease renewal failed; will retry");
    }
  }, Math.max(1_000, Math.floor(leaseMs / 4)));
  renewTimer.unref();


  const elu0 = performance.eventLoopUtilization();
  let pagedEverything = false;
  let sink: WriteSink | undefined;
  try {
    const conn = options.connection ?? appConnection(app, options.domain ?? env().PLATFORM_DOMAIN);
    const client = createCallsClient({
      callsUrl: conn.callsUrl,
      apiKey: conn.apiKey,
      onBehalfOf: conn.onBehalfOf,
      appId: app.appId,
      ...options.client,
    });
    const writer = new CallWriter(db, app.pk);
    const useWorker = options.writer === "worker" || ((options.writer ?? "auto") === "auto" && writer.storedCount() === 0);
    const active = (useWorker ? workerSink(db, app.pk) : undefined) ?? inlineSink(writer);
    sink = active;
    // Two batches can be alive at once with a worker (one being written, one filling) plus
    // the copy handed over: a smaller batch keeps peak memory in bounds (~470 MB measured
    // at 4,000 vs ~680 MB at 8,000) and is still ~16,000 rows per transaction.
    const batchSize = options.batchSize ?? (active.kind === "worker" ? 4_000 : 8_000);
    const saveProgress = () =>
      active.saveProgress(run.pk, [summary.pages, summary.fetched, summary.inserted, summary.updated, summary.unchanged, summary.skipped, summary.refreshed]);
    const state = new RunState(writer, active, summary, batchSize, saveProgress);

    pagedEverything = await pageThrough(client, state, summary, { ...options, signal }, fullDue);
    await state.drain();
    await refreshOngoing(client, state, summary, options.maxRefresh ?? 500, signal);
    await state.drain();

    const finished = Date.now();
    db.update(apps)
      .set({
        lastSuccessfulSyncMs: finished,
        ...(pagedEverything ? { lastFullSyncMs: finished, backfillCompletedMs: app.backfillCompletedMs ?? finished } : {}),
      })
      .where(eq(apps.pk, app.pk))
      .run();
    summary.status = "succeeded";
  } catch (err) {
    const reason = signal.aborted && signal.reason instanceof SyncAbort ? signal.reason : err;
    summary.status = "failed";
    summary.error =
      reason instanceof PlatformError
        ? errorText(reason)
        : `sync of app ${app.appId} failed: ${errorText(reason)}`;
    log.error({ err: summary.error }, "sync failed");
  } finally {
    clearInterval(renewTimer);
    summary.timings.mainBusy = performance.eventLoopUtilization(elu0).utilization;
    summary.timings.writerBusy = sink?.utilization?.();
    await sink?.close().catch(() => undefined);
    summary.timings.wallMs = summary.durationMs = performance.now() - wallStart;
    try {
      db.update(syncRuns)
        .set({
          status: summary.status === "succeeded" ? "succeeded" : "failed",
          finishedMs: Date.now(),
          kind: summary.kind,
          pages: summary.pages,
          fetched: summary.fetched,
          inserted: summary.inserted,
          updated: summary.updated,
          unchanged: summary.unchanged,
          skipped: summary.skipped,
          refreshed: summary.refreshed,
          error: summary.error,
          skippedRecords: summary.skippedRecords.length ? summary.skippedRecords : null,
        })
        .where(eq(syncRuns.pk, run.pk))
        .run();
    } finally {
      releaseLock(db, app.pk, owner);
    }
  }
  log.info(
    {
      status: summary.status, kind: summary.kind, pages: summary.pages, fetched: summary.fetched,
      inserted: summary.inserted, updated: summary.updated, unchanged: summary.unchanged,
      skipped: summary.skipped, refreshed: summary.refreshed, ms: Math.round(summary.timings.wallMs),
    },
    "sync finished",
  );
  return summary;
}

/** Returns true when every page was walked (a full reconcile happened). */
async function pageThrough(
  client: CallsClient,
  state: RunState,
  summary: SyncSummary,
  options: SyncOptions & { signal: AbortSignal },
  fullDue: boolean,
): Promise<boolean> {
  let ordered = true;
  let lastInitiated = Number.POSITIVE_INFINITY;
  let waitStart = performance.now();
  for await (const page of client.pages({}, { perPage: options.perPage ?? 1000, prefetch: options.prefetch ?? 2, signal: options.signal })) {
    summary.timings.fetchWaitMs += performance.now() - waitStart;
    summary.timings.fetchMs += page.fetchMs;
    summary.pages++;
    summary.fetched += page.records.length;
    const { allKnown, initiated } = await state.handle(page.records, page.rawTexts);
    for (const t of initiated) {
      if (t === null) continue;
      if (t > lastInitiated) ordered = false;
      lastInitiated = t;
    }
    options.onPage?.({ page: page.page, fetched: summary.fetched });
    if (!fullDue && ordered && allKnown) {
      summary.stoppedEarly = true;
      return false;
    }
    waitStart = performance.now();
  }
  return true;
}

/** Re-fetches calls stored as ongoing that this run did not see, until they end. */
async function refreshOngoing(
  client: CallsClient,
  state: RunState,
  summary: SyncSummary,
  maxRefresh: number,
  signal: AbortSignal,
): Promise<void> {
  const t0 = performance.now();
  await state.drain();
  const ids = state.writer
    .ongoingSessionIds()
    .filter((id) => !state.seenOngoing.has(id))
    .slice(0, maxRefresh);
  const CONCURRENCY = 4;
  let next = 0;
  const worker = async () => {
    while (next < ids.length) {
      const id = ids[next++];
      try {
        const rec = await client.getCall(id, signal);
        await state.handle([rec]);
        summary.refreshed++;
      } catch (err) {
        if (err instanceof PlatformNotFoundError) {
          summary.refreshMissing++;
          state.note(id, `refresh: the platform no longer knows this ongoing call (${err.message})`);
        } else if (err instanceof PlatformAuthError || signal.aborted) {
          throw err;
        } else {
          state.note(id, `refresh failed: ${errorText(err)}`);
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, ids.length) }, worker));
  summary.timings.refreshMs += performance.now() - t0;
}

export interface SyncAllOptions extends Omit<SyncOptions, "connection" | "onPage"> {
  /** Only these app ids (default: every registered app). */
  appIds?: string[];
}

/** Syncs every app (one after the other); one app failing never stops the others. */
export async function syncAll(db: Db, options: SyncAllOptions): Promise<SyncSummary[]> {
  const results: SyncSummary[] = [];
  const wanted = options.appIds ? new Set(options.appIds) : null;
  for (const app of listApps(db)) {
    if (wanted && !wanted.has(app.appId)) continue;
    if (options.signal?.aborted) break;
    try {
      results.push(await syncApp(db, app, options));
    } catch (err) {
      // Only the lock or run bookkeeping can throw here (e.g. the database stayed busy).
      results.push({ ...emptySummary(app.appId), error: `sync of app ${app.appId} could not start: ${errorText(err)}` });
    }
  }
  return results;
}
