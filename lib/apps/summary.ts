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

/** Every registered app with its call count and minutes (the plain home page). */
export function getAppSummaries(db: Db): AppSummary[] {
  return db.all<AppSummary>(sql`
    SELECT a.app_id AS appId, a.name AS name, a.region AS region,
           COUNT(c.pk) AS calls,
           COALESCE(SUM(c.total_audio_minutes), 0) AS audioMinutes,
           COALESCE(SUM(c.total_video_minutes), 0) AS videoMinutes,
           a.last_successful_sync_ms AS lastSuccessfulSyncMs
    FROM apps a LEFT JOIN calls c ON c.app_pk = a.pk
    GROUP BY a.pk ORDER BY a.app_id`);
}
