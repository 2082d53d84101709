/**
 * The categories of a call the filter model and the reports know (type, mode, status,
 * receiver type), their values and labels, and the duration buckets of the
 * distribution. How an engine encodes them is its own business (the memory engine's
 * cell codec: engines/memory/scan/cell-codec.ts).
 */

export const TYPES = ["audio", "video"] as const;
export const MODES = ["call", "meet", "presenter"] as const;
export const STATUSES = ["ended", "ongoing", "rejected", "unanswered"] as const;
export const RECEIVER_TYPES = ["user", "group"] as const;

export type CallTypeValue = (typeof TYPES)[number];
export type ModeValue = (typeof MODES)[number];
export type StatusValue = (typeof STATUSES)[number];
export type ReceiverTypeValue = (typeof RECEIVER_TYPES)[number];

/** The categorical dimensions and their known values, in the breakdowns' order. */
export const DIMENSION_VALUES = { type: TYPES, mode: MODES, status: STATUSES, receiverType: RECEIVER_TYPES } as const;
export type DimensionName = keyof typeof DIMENSION_VALUES;

/** Label of the values Callboard does not know (unknown text or missing: kept, never dropped). */
export const OTHER = "other";

/** Duration buckets of the distribution (upper bounds in seconds, exclusive). */
export const DURATION_BUCKETS = [
  { key: "lt1m", label: "<1 min", maxSeconds: 60 },
  { key: "1to5m", label: "1–5 min", maxSeconds: 300 },
  { key: "5to15m", label: "5–15 min", maxSeconds: 900 },
  { key: "15to30m", label: "15–30 min", maxSeconds: 1800 },
  { key: "30to60m", label: "30–60 min", maxSeconds: 3600 },
  { key: "ge60m", label: "≥60 min", maxSeconds: Infinity },
] as const;
