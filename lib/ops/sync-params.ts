import { z } from "zod";
import { appsParam, enumParam, intParam, optionalIntParam, tzParam } from "./params";

/** `/sync` and `GET /api/v1/sync`. */
export const STATUSES = ["any", "running", "succeeded", "failed"] as const;

export const syncParamsSchema = z.object({
  app: appsParam,
  status: enumParam(STATUSES, "any"),
  limit: intParam(1, 500, 50),
  before: optionalIntParam(1, Number.MAX_SAFE_INTEGER),
  /** The zone times are shown in (the filter bar's, as on the analytics pages). */
  tz: tzParam,
});
export type SyncParams = z.infer<typeof syncParamsSchema>;

/** `POST /api/v1/sync` body: one app, or every app when absent. */
export const syncNowSchema = z.object({
  app: z.string().trim().min(1).max(63).optional(),
});

export const SYNC_REFRESH_MS = { idle: 30_000, running: 3_000 } as const;
