/**
 * What an alert rule is, as the API, the /alerts page and the warehouse agree on it:
 * the metrics, the windows, the condition and the filters (the analytics filter model
 * without time). Client-safe: no warehouse import, so the page's form shares it.
 */
import { z } from "zod";
import { MODES, RECEIVER_TYPES, STATUSES, TYPES } from "@/lib/analytics/dims";

export const METRICS = {
  calls: { label: "Calls", unit: "calls", source: "calls", rate: false },
  unansweredRate: { label: "Unanswered rate", unit: "%", source: "calls", rate: true },
  rejectedRate: { label: "Rejected rate", unit: "%", source: "calls", rate: true },
  audioMinutes: { label: "Audio minutes", unit: "min", source: "calls", rate: false },
  videoMinutes: { label: "Video minutes", unit: "min", source: "calls", rate: false },
  avgDurationSeconds: { label: "Average duration", unit: "s", source: "calls", rate: false },
  recordings: { label: "Recordings", unit: "recordings", source: "calls", rate: false },
  webhookDeliveries: { label: "Webhook deliveries received", unit: "deliveries", source: "ingest", rate: false },
  failedSyncRuns: { label: "Failed sync runs", unit: "runs", source: "sync", rate: false },
} as const;
export type Metric = keyof typeof METRICS;
export const METRIC_NAMES = Object.keys(METRICS) as [Metric, ...Metric[]];

export const STATES = ["ok", "firing", "resolved"] as const;
export type AlertState = (typeof STATES)[number];

/** Windows are aligned to UTC (a 1-hour window is 10:00–11:00), so every length divides a day. */
export const MIN_WINDOW_SECONDS = 300;
export const MAX_WINDOW_SECONDS = 86_400;
export const WINDOW_CHOICES = [300, 600, 900, 1800, 3600, 7200, 10_800, 14_400, 21_600, 43_200, 86_400] as const;

export function describeWindow(seconds: number): string {
  if (seconds % 86_400 === 0) return seconds === 86_400 ? "1 day" : `${seconds / 86_400} days`;
  if (seconds % 3600 === 0) return seconds === 3600 ? "1 hour" : `${seconds / 3600} hours`;
  return `${seconds / 60} minutes`;
}

const windowSchema = z
  .number({ error: "must be a number of seconds" })
  .int("must be a whole number of seconds")
  .min(MIN_WINDOW_SECONDS, `must be at least ${MIN_WINDOW_SECONDS} (5 minutes)`)
  .max(MAX_WINDOW_SECONDS, `must be at most ${MAX_WINDOW_SECONDS} (1 day)`)
  .refine((s) => s % 60 === 0 && MAX_WINDOW_SECONDS % s === 0, `must be whole minutes that divide a day, e.g. ${WINDOW_CHOICES.join(", ")}`);

/** The filter model (lib/analytics/filters.ts) without its time, paging and output fields. */
export const alertFiltersSchema = z
  .object({
    app: z.array(z.string().trim().min(1, "must be a platform app id").max(63, "must be a platform app id")).max(100, "at most 100 apps").optional(),
    type: z.enum(TYPES).optional(),
    mode: z.enum(MODES).optional(),
    status: z.enum(STATUSES).optional(),
    receiverType: z.enum(RECEIVER_TYPES).optional(),
    hasRecording: z.boolean().optional(),
    uid: z.string().min(1).max(256).optional(),
    participantsCount: z.number().int().min(0).max(100_000).optional(),
  })
  .strict();
export type AlertFilters = z.infer<typeof alertFiltersSchema>;
export const CALL_FILTER_NAMES = ["type", "mode", "status", "receiverType", "hasRecording", "uid", "participantsCount"] as const;

const finite = z.number({ error: "must be a number" }).refine(Number.isFinite, "must be a finite number");

export const conditionSchema = z.discriminatedUnion(
  "op",
  [
    z.object({ op: z.literal("above"), value: finite }).strict(),
    z.object({ op: z.literal("below"), value: finite }).strict(),
    z
      .object({
        op: z.literal("change"),
        /** Fires when the value moved by more than this percentage against the previous window. */
        percent: finite.refine((p) => p > 0 && p <= 100_000, "must be more than 0 (and at most 100000)"),
        direction: z.enum(["up", "down", "either"]).default("either"),
      })
      .strict(),
  ],
  { error: 'must be {op: "above"|"below", value} or {op: "change", percent, direction?}' },
);
export type AlertCondition = z.infer<typeof conditionSchema>;

export const destinationSchema = z
  .object({
    url: z.string().trim().min(1, "is required").max(2000, "at most 2000 characters"),
    /** Allows a loopback, private or link-local address (a receiver inside your own network). */
    allowPrivate: z.boolean().default(false),
  })
  .strict();
export type DestinationInput = z.infer<typeof destinationSchema>;

const ruleFields = {
  name: z.string().trim().min(1, "is required").max(100, "at most 100 characters"),
  enabled: z.boolean(),
  metric: z.enum(METRIC_NAMES),
  filters: alertFiltersSchema,
  windowSeconds: windowSchema,
  condition: conditionSchema,
  minCalls: z.number().int("must be a whole number").min(0).max(1_000_000_000),
  destination: destinationSchema.nullable(),
};

/** A whole rule: the fields and the checks across them. */
export const ruleSchema = z
  .object({
    ...ruleFields,
    enabled: ruleFields.enabled.default(true),
    filters: ruleFields.filters.default({}),
    minCalls: ruleFields.minCalls.default(0),
    destination: ruleFields.destination.default(null),
  })
  .strict()
  .superRefine((rule, ctx) => {
    const meta = METRICS[rule.metric];
    if (meta.source !== "calls") {
      // Deliveries and sync runs belong to an app, not to a call: only `app` applies.
      for (const name of CALL_FILTER_NAMES) {
        if (rule.filters[name] !== undefined) {
          ctx.addIssue({ code: "custom", path: ["filters", name], message: `does not apply to the metric ${rule.metric} (only app does)` });
        }
      }
    }
    if (meta.rate && rule.condition.op !== "change" && (rule.condition.value < 0 || rule.condition.value > 100)) {
      ctx.addIssue({ code: "custom", path: ["condition", "value"], message: `${rule.metric} is a percentage: the value must be between 0 and 100` });
    }
  });
export type RuleInput = z.input<typeof ruleSchema>;
export type Rule = z.infer<typeof ruleSchema>;

/** PATCH: any field of a rule; `rotateSecret` makes a new signing secret (shown once). */
export const rulePatchSchema = z
  .object({
    name: ruleFields.name,
    enabled: ruleFields.enabled,
    metric: ruleFields.metric,
    filters: ruleFields.filters,
    windowSeconds: ruleFields.windowSeconds,
    condition: ruleFields.condition,
    minCalls: ruleFields.minCalls,
    destination: ruleFields.destination,
    rotateSecret: z.literal(true),
  })
  .partial()
  .strict();
export type RulePatch = z.infer<typeof rulePatchSchema>;

const valueFormat = new Intl.NumberFormat("en", { maximumFractionDigits: 2 });

/** A metric's value for people: "34.5%", "1,250 calls", "812.25 min". */
export function formatMetricValue(metric: Metric, v: number): string {
  const unit = METRICS[metric].unit;
  return unit === "%" ? `${valueFormat.format(v)}%` : `${valueFormat.format(v)} ${unit}`;
}

/** "above 20%", "below 5 calls", "up or down by more than 50%". */
export function describeCondition(metric: Metric, c: AlertCondition): string {
  if (c.op === "above") return `above ${formatMetricValue(metric, c.value)}`;
  if (c.op === "below") return `below ${formatMetricValue(metric, c.value)}`;
  const dir = c.direction === "up" ? "up" : c.direction === "down" ? "down" : "up or down";
  return `${dir} by more than ${c.percent}% against the previous window`;
}
