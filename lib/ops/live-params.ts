import { z } from "zod";
import { appsParam, intParam, tzParam } from "./params";

/** `/live` and `GET /api/v1/live`: which apps, and how long ended sessions stay listed (minutes). */
export const liveParamsSchema = z.object({
  app: appsParam,
  recent: intParam(0, 1440, 15),
  /** The zone times are shown in (the filter bar's, as on the analytics pages). */
  tz: tzParam,
});
export type LiveParams = z.infer<typeof liveParamsSchema>;

export const LIVE_REFRESH_MS = 4_000;
export const RECENT_CHOICES = [0, 15, 60, 240] as const;

/**
 * The sessions to show: going on now, plus those that ENDED (by the platform's end time,
 * not by when the delivery arrived: a replay of old webhooks is not "recent") within
 * `recentMinutes`.
 */
export function visibleLiveSessions<T extends { status: string; endedAt: number | null; lastEventMs: number }>(sessions: T[], recentMinutes: number, nowMs: number): T[] {
  const since = nowMs / 1000 - recentMinutes * 60;
  return sessions.filter((s) => s.status !== "ended" || (s.endedAt ?? s.lastEventMs / 1000) >= since);
}
