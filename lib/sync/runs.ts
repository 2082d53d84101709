import { and, count, desc, eq, gt, gte, inArray, lt } from "drizzle-orm";
import type { Db } from "@/db/client";
import type { AppRow } from "@/db/schema";
import { tablesOf } from "@/db/state";
import { syncApp } from "./sync-app";
import type { SyncCounts } from "./writer";

/**
 * Read side of the sync for the dashboard and the API. Every query is limited to `appPks`,
 * and written once for both stores of the state (decision 0042): what any server ran shows.
 */

export interface SyncRunView extends SyncCounts {
  id: number;
  appId: string;
  appName: string;
  kind: "full" | "incremental";
  trigger: "schedule" | "cli" | "manual" | "demo" | "test";
  status: "running" | "succeeded" | "failed";
  startedMs: number;
  finishedMs: number | null;
  /** null while running. */
  durationMs: number | null;
  error: string | null;
  /** The first skipped records with their reasons (at most 100 per run). */
  skippedRecords: Array<{ sessionId: string | null; reason: string }>;
  /** The page the run began at: above 1 when it resumed the failed run `resumedFromRun`. */
  startPage: number;
  resumedFromRun: number | null;
}

export interface SyncRunsParams {
  /** Default 50, at most 500. */
  limit?: number;
  /** Runs older than this id (paging, newest first). */
  before?: number;
  status?: "running" | "succeeded" | "failed";
}

/** Newest first. */
export async function getSyncRuns(db: Db, appPks: readonly number[], params: SyncRunsParams = {}): Promise<SyncRunView[]> {
  if (appPks.length === 0) return [];
  const { apps, syncRuns } = tablesOf(db);
  const limit = Math.max(1, Math.min(500, Math.floor(params.limit ?? 50)));
  const conds = [inArray(syncRuns.appPk, [...appPks])];
  if (params.before !== undefined) conds.push(lt(syncRuns.pk, params.before));
  if (params.status !== undefined) conds.push(eq(syncRuns.status, params.status));
  const rows = await db
    .select({ run: syncRuns, appId: apps.appId, appName: apps.name })
    .from(syncRuns)
    .innerJoin(apps, eq(apps.pk, syncRuns.appPk))
    .where(and(...conds))
    .orderBy(desc(syncRuns.startedMs), desc(syncRuns.pk))
    .limit(limit);
  return rows.map(({ run, appId, appName }) => ({
      id: run.pk,
      appId,
      appName,
      kind: run.kind,
      trigger: run.trigger,
      status: run.status,
      startedMs: run.startedMs,
      finishedMs: run.finishedMs,
      durationMs: run.finishedMs === null ? null : Math.max(0, run.finishedMs - run.startedMs),
      pages: run.pages,
      fetched: run.fetched,
      inserted: run.inserted,
      updated: run.updated,
      unchanged: run.unchanged,
      skipped: run.skipped,
      refreshed: run.refreshed,
      error: run.error,
      skippedRecords: Array.isArray(run.skippedRecords) ? run.skippedRecords : [],
      startPage: run.startPage,
      resumedFromRun: run.resumedFromRun,
    }));
}

/**
 * Runs of these apps that failed and finished in [fromMs, toMs) (the alerts' "failed
 * sync runs"). A run is never longer than a day, which bounds the index range on start.
 */
export async function countFailedRuns(db: Db, appPks: readonly number[], fromMs: number, toMs: number): Promise<number> {
  if (appPks.length === 0 || !(toMs > fromMs)) return 0;
  const { syncRuns } = tablesOf(db);
  const [row] = await db
    .select({ n: count() })
    .from(syncRuns)
    .where(
      and(
        inArray(syncRuns.appPk, [...appPks]),
        gte(syncRuns.startedMs, fromMs - 86_400_000),
        lt(syncRuns.startedMs, toMs),
        eq(syncRuns.status, "failed"),
        gte(syncRuns.finishedMs, fromMs),
        lt(syncRuns.finishedMs, toMs),
      ),
    );
  return row?.n ?? 0;
}

export interface AppSyncStatus {
  appId: string;
  appName: string;
  lastSuccessfulSyncMs: number | null;
  /** The newest run of the app, whatever its outcome. */
  lastRun: SyncRunView | null;
  running: boolean;
  /** Runs that failed since the last success. */
  failuresSinceSuccess: number;
}

/** One line per app: where its sync stands (the sync page's summary). */
export async function getSyncStatus(db: Db, appPks: readonly number[]): Promise<AppSyncStatus[]> {
  if (appPks.length === 0) return [];
  const { apps, syncRuns } = tablesOf(db);
  const rows = await db
    .select({ pk: apps.pk, appId: apps.appId, name: apps.name, lastSuccessfulSyncMs: apps.lastSuccessfulSyncMs })
    .from(apps)
    .where(inArray(apps.pk, [...appPks]))
    .orderBy(apps.appId);
  const statuses: AppSyncStatus[] = [];
  for (const a of rows) {
    const [lastRun] = await getSyncRuns(db, [a.pk], { limit: 1 });
    const [failures] = await db
      .select({ n: count() })
      .from(syncRuns)
      .where(and(eq(syncRuns.appPk, a.pk), eq(syncRuns.status, "failed"), gt(syncRuns.startedMs, a.lastSuccessfulSyncMs ?? 0)));
    statuses.push({
      appId: a.appId,
      appName: a.name,
      lastSuccessfulSyncMs: a.lastSuccessfulSyncMs,
      lastRun: lastRun ?? null,
      running: lastRun?.status === "running",
      failuresSinceSuccess: failures?.n ?? 0,
    });
  }
  return statuses;
}

export interface ManualSyncResult {
  appId: string;
  /** `running`: still going when the wait ended; it carries on in the background. */
  status: "succeeded" | "failed" | "already_running" | "running";
  runId: number | null;
  inserted: number;
  updated: number;
  unchanged: number;
  skipped: number;
  durationMs: number | null;
  error: string | null;
}

/**
 * "Sync now": starts one sync per app and waits up to `waitMs` for them. A sync that
 * takes longer keeps running (the per-app lock makes a second click harmless) and its
 * run shows as `running` in getSyncRuns until it ends.
 */
export async function startManualSync(db: Db, targets: readonly AppRow[], options: { waitMs?: number } = {}): Promise<ManualSyncResult[]> {
  const waitMs = options.waitMs ?? 15_000;
  return Promise.all(
    targets.map(async (app): Promise<ManualSyncResult> => {
      const run = syncApp(db, app, { trigger: "manual" }).catch((err: unknown) => ({
        appId: app.appId,
        status: "failed" as const,
        runPk: null,
        inserted: 0,
        updated: 0,
        unchanged: 0,
        skipped: 0,
        durationMs: 0,
        error: err instanceof Error ? err.message : String(err),
      }));
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), waitMs);
      });
      const done = await Promise.race([run, timeout]);
      clearTimeout(timer);
      if (done === null) {
        return { appId: app.appId, status: "running", runId: null, inserted: 0, updated: 0, unchanged: 0, skipped: 0, durationMs: null, error: null };
      }
      return {
        appId: app.appId,
        status: done.status,
        runId: done.runPk,
        inserted: done.inserted,
        updated: done.updated,
        unchanged: done.unchanged,
        skipped: done.skipped,
        durationMs: Math.round(done.durationMs),
        error: done.error,
      };
    }),
  );
}
