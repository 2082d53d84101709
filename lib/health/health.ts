import { sql } from "drizzle-orm";
import type { Db } from "@/db/client";

export interface Health {
  status: "ok" | "unavailable";
  database: "ok" | "unreadable";
  /** ISO time of the last successful sync of any app, or null. */
  lastSyncAt: string | null;
}

/** Open to anyone: says whether the warehouse can be read, and nothing secret. */
export function getHealth(open: () => Db): Health {
  try {
    const db = open();
    const row = db.get<{ last: number | null }>(sql`SELECT MAX(last_successful_sync_ms) AS last FROM apps`);
    return {
      status: "ok",
      database: "ok",
      lastSyncAt: row?.last ? new Date(row.last).toISOString() : null,
    };
  } catch {
    return { status: "unavailable", database: "unreadable", lastSyncAt: null };
  }
}
