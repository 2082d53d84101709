import { sql } from "drizzle-orm";
import type { Db } from "@/db/client";

export interface AppSummary {
  appId: string;
  name: string;
  region: string;
  calls: number;
  audioMinutes: number;
  videoMinutes: number;
  lastSuccessfulSyncMs: number | null;
}

/**
 * The registered apps the caller may see (`appScope(caller)` from lib/auth) with their
 * call count and minutes (the plain home page). The restriction is in the SQL.
 */
export function getAppSummaries(db: Db, scope: "all" | readonly number[]): AppSummary[] {
  if (scope !== "all" && scope.length === 0) return [];
  const where = scope === "all" ? sql`` : sql`WHERE a.pk IN (${sql.join(scope.map((pk) => sql`${pk}`), sql`, `)})`;
  return db.all<AppSummary>(sql`
    SELECT a.app_id AS appId, a.name AS name, a.region AS region,
           COUNT(c.pk) AS calls,
           COALESCE(SUM(c.total_audio_minutes), 0) AS audioMinutes,
           COALESCE(SUM(c.total_video_minutes), 0) AS videoMinutes,
           a.last_successful_sync_ms AS lastSuccessfulSyncMs
    FROM apps a LEFT JOIN calls c ON c.app_pk = a.pk
    ${where}
    GROUP BY a.pk ORDER BY a.app_id`);
}
