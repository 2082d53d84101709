import type { Db } from "@/db/client";

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

export function syncAges(db: Db, nowMs = Date.now()): SyncAge[] {
  const rows = db.$client
    .prepare<[], { app_id: string; last: number | null; created: number }>("SELECT app_id, last_successful_sync_ms AS last, created_ms AS created FROM apps ORDER BY app_id")
    .all();
  return rows.map((r) => ({ appId: r.app_id, lastGoodSyncMs: r.last, ageSeconds: Math.max(0, Math.floor((nowMs - (r.last ?? r.created)) / 1000)) }));
}

/** The age past which an app's syncs count as stale: the setting, else three schedule intervals; 0 is off. */
export function syncMaxAgeSeconds(config: { SYNC_MAX_AGE_SECONDS?: number; SYNC_INTERVAL_SECONDS: number }): number {
  return config.SYNC_MAX_AGE_SECONDS ?? 3 * config.SYNC_INTERVAL_SECONDS;
}

export function staleSyncs(db: Db, maxAgeSeconds: number, nowMs = Date.now()): SyncAge[] {
  if (maxAgeSeconds <= 0) return [];
  return syncAges(db, nowMs).filter((a) => a.ageSeconds > maxAgeSeconds);
}
