import { z } from "zod";
import { appsParam, enumParam, formatParam, intParam, tzParam } from "@/app/_ops/params";

/** `/events`, `GET /api/v1/events` (counts) and `GET /api/v1/events/deliveries`. */
export const OUTCOMES = ["all", "accepted", "rejected", "applied", "stored", "failed"] as const;
export const DAY_CHOICES = [7, 30, 90, 180, 365] as const;

export const eventsParamsSchema = z.object({
  app: appsParam,
  /** The last N days (in `tz`), today included. */
  days: intParam(1, 366, 30),
  tz: tzParam,
  outcome: enumParam(OUTCOMES, "all"),
  limit: intParam(1, 500, 50),
  /** Page of the per-day table (the page only). */
  page: intParam(1, 100_000, 1),
  format: formatParam,
});
export type EventsParams = z.infer<typeof eventsParamsSchema>;

/** The time range of the last `days` days in `tz`: from the start of the first day to now. */
export function eventsRange(days: number, tz: string, nowMs = Date.now()): { from: number; to: number; dayList: string[] } {
  const fmt = new Intl.DateTimeFormat("en-CA", { timeZone: tz, year: "numeric", month: "2-digit", day: "2-digit" });
  const dayList: string[] = [];
  // Walk back by whole days at noon-ish offsets; every tz offset is a multiple of 15 minutes.
  for (let i = days - 1; i >= 0; i--) {
    const d = fmt.format(new Date(nowMs - i * 86_400_000));
    if (dayList.at(-1) !== d) dayList.push(d);
  }
  // First 15-minute bucket whose day (in tz) is the first listed day.
  let from = Math.floor((nowMs - days * 86_400_000) / 900_000) * 900;
  while (fmt.format(new Date(from * 1000)) < dayList[0]) from += 900;
  const to = Math.floor(nowMs / 1000) + 1;
  return { from, to, dayList };
}
