import { z } from "zod";
import { appsParam, intParam } from "@/app/_ops/params";

/** `/live` and `GET /api/v1/live`: which apps, and how long ended sessions stay listed (minutes). */
export const liveParamsSchema = z.object({
  app: appsParam,
  recent: intParam(0, 1440, 15),
});
export type LiveParams = z.infer<typeof liveParamsSchema>;

export const LIVE_REFRESH_MS = 4_000;
export const RECENT_CHOICES = [0, 15, 60, 240] as const;
