import { asc } from "drizzle-orm";
import type { Db } from "@/db/client";
import { tablesOf } from "@/db/state";

/**
 * How long ago each app last synced well (issue 27 item 5): readiness (/api/health) lists
 * the apps past the configured age (SYNC_MAX_AGE_SECONDS) and /metrics shows every app's
 * age. An app that never synced counts from when it was added.
 */
export interface SyncAge {
  appId: string;
  /** Epoch ms of the last successful sync, null when it never synced. */
  lastGoodSyncMs: number | null;
  ageSeconds: number;
}

/** Every app's age, on SQLite or Postgres (one query, decision 0042). */
export async function syncAges(db: Db, nowMs = Date.now()): Promise<SyncAge[]> {
  const { apps } = tablesOf(db);
  const rows = await db.select({ appId: apps.appId, last: apps.lastSuccessfulSyncMs, created: apps.createdMs }).from(apps).orderBy(asc(apps.appId));
  return rows.map((r) => ({ appId: r.appId, lastGoodSyncMs: r.last, ageSeconds: Math.max(0, Math.floor((nowMs - (r.last ?? r.created)) / 1000)) }));
}

/** The age past which an app's syncs count as stale: the setting, else three schedule intervals; 0 is off. */
export function syncMaxAgeSeconds(config: { SYNC_MAX_AGE_SECONDS?: number; SYNC_INTERVAL_SECONDS: number }): number {
  return config.SYNC_MAX_AGE_SECONDS ?? 3 * config.SYNC_INTERVAL_SECONDS;
}

export async function staleSyncs(db: Db, maxAgeSeconds: number, nowMs = Date.now()): Promise<SyncAge[]> {
  if (maxAgeSeconds <= 0) return [];
  return (await syncAges(db, nowMs)).filter((a) => a.ageSeconds > maxAgeSeconds);
}
