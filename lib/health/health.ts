import { statfsSync } from "node:fs";
import path from "node:path";
import { max } from "drizzle-orm";
import type { Db } from "@/db/client";
import { isPostgresState, tablesOf } from "@/db/state";
import { staleSyncs } from "./sync-age";
import {
  currentWriteFailure, describeWriteFailure, writeFailureReason, type WriteFailureReason,
} from "@/lib/ingest/write-state";

export interface Health {
  status: "ok" | "unavailable";
  /**
   * `not_writable`: it reads, but writes fail (`reason` says why); webhooks answer 503 meanwhile.
   * With DATABASE_URL this is the Postgres holding the state: `unreadable` when it cannot be reached.
   */
  database: "ok" | "unreadable" | "not_writable";
  /** ISO time of the last successful sync of any app, or null. */
  lastSyncAt: string | null;
  reason?: WriteFailureReason;
  message?: string;
  /**
   * Apps whose last good sync is older than `syncMaxAgeSeconds` (when that is set): the
   * server still serves (200), but their figures are getting old.
   */
  staleSyncs?: Array<{ app: string; lastGoodSyncAt: string | null; ageSeconds: number }>;
}

export interface HealthOptions {
  /** How long a write may wait for the lock in the probe (ms). */
  probeBusyTimeoutMs?: number;
  /** Below this many free bytes on the database's file system, writes count as failing. */
  minFreeBytes?: number;
  /** A writer's failure counts for this long unless a write succeeds meanwhile (ms). */
  failureMemoryMs?: number;
  nowMs?: number;
  /** List apps whose last good sync is older than this (seconds; 0 or unset: do not check). */
  syncMaxAgeSeconds?: number;
}

/**
 * Open to anyone: says whether the warehouse can be read AND written, and nothing
 * secret. Writes are judged three ways, cheapest first: a write the ingest saw fail
 * lately (lib/ingest/write-state.ts), the free space of the database's file system,
 * and a probe that takes the write lock (BEGIN IMMEDIATE, waiting at most
 * `probeBusyTimeoutMs`) and gives it back at once without writing anything.
 *
 * With the state in Postgres (DATABASE_URL) the read is the judge: a Postgres that
 * answers it takes writes too (the webhook inbox answers 503 for any write it refuses),
 * and the file-system and lock probes are SQLite's.
 */
export async function getHealth(open: () => Db, options: HealthOptions = {}): Promise<Health> {
  let db: Db;
  let lastSyncAt: string | null;
  let stale: Pick<Health, "staleSyncs">;
  try {
    db = open();
    const { apps } = tablesOf(db);
    const [row] = await db.select({ last: max(apps.lastSuccessfulSyncMs) }).from(apps);
    lastSyncAt = row?.last ? new Date(Number(row.last)).toISOString() : null;
    stale = await syncPart(db, options);
  } catch {
    return { status: "unavailable", database: "unreadable", lastSyncAt: null };
  }
  if (isPostgresState(db)) return { status: "ok", database: "ok", lastSyncAt, ...stale };
  const reason = writeProblem(db, options);
  if (reason === null) return { status: "ok", database: "ok", lastSyncAt, ...stale };
  return { status: "unavailable", database: "not_writable", lastSyncAt, reason, message: describeWriteFailure(reason), ...stale };
}

async function syncPart(db: Db, options: HealthOptions): Promise<Pick<Health, "staleSyncs">> {
  if (!options.syncMaxAgeSeconds) return {};
  const stale = await staleSyncs(db, options.syncMaxAgeSeconds, options.nowMs);
  return {
    staleSyncs: stale.map((a) => ({ app: a.appId, lastGoodSyncAt: a.lastGoodSyncMs === null ? null : new Date(a.lastGoodSyncMs).toISOString(), ageSeconds: a.ageSeconds })),
  };
}

function writeProblem(db: Db, options: HealthOptions): WriteFailureReason | null {
  const now = options.nowMs ?? Date.now();
  const seen = currentWriteFailure();
  if (seen && now - seen.lastMs < (options.failureMemoryMs ?? 60_000)) return seen.reason;

  const sqlite = db.$client;
  if (!sqlite.memory && freeBytes(sqlite.name) < (options.minFreeBytes ?? 64 * 1024)) return "disk_full";
  return lockProbe(db, options.probeBusyTimeoutMs ?? 500);
}

function freeBytes(file: string): number {
  try {
    const fs = statfsSync(path.dirname(path.resolve(file)));
    return fs.bavail * fs.bsize;
  } catch {
    return Number.POSITIVE_INFINITY; // no answer from the file system: the probe decides
  }
}

function lockProbe(db: Db, busyTimeoutMs: number): WriteFailureReason | null {
  const sqlite = db.$client;
  if (sqlite.inTransaction) return null;
  const normal = Number(sqlite.pragma("busy_timeout", { simple: true }));
  sqlite.pragma(`busy_timeout = ${Math.min(busyTimeoutMs, normal)}`);
  try {
    sqlite.exec("BEGIN IMMEDIATE");
    sqlite.exec("ROLLBACK");
    return null;
  } catch (error) {
    if (sqlite.inTransaction) sqlite.exec("ROLLBACK");
    return writeFailureReason(error) ?? "unknown";
  } finally {
    sqlite.pragma(`busy_timeout = ${normal}`);
  }
}
