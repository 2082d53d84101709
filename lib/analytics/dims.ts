/**
 * The packed dimension code of a call (see db/schema/analytics.ts): one small integer
 * that the rollup tables key on. The same mapping exists three times and must agree:
 * here in TypeScript (tests, the bench), as SQL over a `calls` row (`dimsSql`, used by
 * triggers and by reads of raw rows), and as arithmetic decoders (`dimPartSql`).
 */

export const TYPES = ["audio", "video"] as const;
export const MODES = ["call", "meet", "presenter"] as const;
export const STATUSES = ["ended", "ongoing", "rejected", "unanswered"] as const;
export const RECEIVER_TYPES = ["user", "group"] as const;

export type CallTypeValue = (typeof TYPES)[number];
export type ModeValue = (typeof MODES)[number];
export type StatusValue = (typeof STATUSES)[number];
export type ReceiverTypeValue = (typeof RECEIVER_TYPES)[number];

/** Each categorical dimension: its known values (code = index), the code of anything
 * else (unknown or missing), and its weight in the packed integer. */
export const DIMENSIONS = {
  type: { column: "type", values: TYPES as readonly string[], weight: 1 },
  mode: { column: "mode", values: MODES as readonly string[], weight: 3 },
  status: { column: "status", values: STATUSES as readonly string[], weight: 12 },
  receiverType: { column: "receiver_type", values: RECEIVER_TYPES as readonly string[], weight: 60 },
} as const;
export const RECORDING_WEIGHT = 180;
export type DimensionName = keyof typeof DIMENSIONS;

/** Label of the code that holds values Callboard does not know (kept, never dropped). */
export const OTHER = "other";

export function codeOf(dim: DimensionName, value: string | null | undefined): number {
  const d = DIMENSIONS[dim];
  const i = value == null ? -1 : d.values.indexOf(value);
  return i >= 0 ? i : d.values.length;
}

export function packDims(c: { type: string | null; mode: string | null; status: string | null; receiverType: string | null; hasRecording: boolean }): number {
  return (
    codeOf("type", c.type) +
    3 * codeOf("mode", c.mode) +
    12 * codeOf("status", c.status) +
    60 * codeOf("receiverType", c.receiverType) +
    RECORDING_WEIGHT * (c.hasRecording ? 1 : 0)
  );
}

/** SQL: the packed code of the `calls` row aliased `r` (a trigger's `new`/`old`, or a table alias). */
export function dimsSql(r: string): string {
  const part = (dim: DimensionName) => {
    const d = DIMENSIONS[dim];
    const whens = d.values.map((v, i) => `WHEN '${v}' THEN ${i}`).join(" ");
    return `(CASE ${r}.${d.column} ${whens} ELSE ${d.values.length} END)`;
  };
  return `(${part("type")} + 3 * ${part("mode")} + 12 * ${part("status")} + 60 * ${part("receiverType")} + ${RECORDING_WEIGHT} * (${r}.has_recording <> 0))`;
}

/** SQL: one dimension's code decoded from a packed `dims` column. */
export function dimPartSql(dims: string, dim: DimensionName | "hasRecording"): string {
  switch (dim) {
    case "type":
      return `(${dims} % 3)`;
    case "mode":
      return `((${dims} / 3) % 4)`;
    case "status":
      return `((${dims} / 12) % 5)`;
    case "receiverType":
      return `((${dims} / 60) % 3)`;
    case "hasRecording":
      return `(${dims} / ${RECORDING_WEIGHT})`;
  }
}

/** Label of a decoded code (the dimension's value, or `other`). */
export function labelOf(dim: DimensionName, code: number): string {
  return DIMENSIONS[dim].values[code] ?? OTHER;
}

/** Duration buckets of the distribution (upper bounds in seconds, exclusive). */
export const DURATION_BUCKETS = [
  { key: "lt1m", label: "<1 min", maxSeconds: 60 },
  { key: "1to5m", label: "1–5 min", maxSeconds: 300 },
  { key: "5to15m", label: "5–15 min", maxSeconds: 900 },
  { key: "15to30m", label: "15–30 min", maxSeconds: 1800 },
  { key: "30to60m", label: "30–60 min", maxSeconds: 3600 },
  { key: "ge60m", label: "≥60 min", maxSeconds: Infinity },
] as const;

export function durationBucketOf(seconds: number): number {
  return DURATION_BUCKETS.findIndex((b) => seconds < b.maxSeconds);
}

export function durBucketSql(r: string): string {
  const whens = DURATION_BUCKETS.slice(0, -1)
    .map((b, i) => `WHEN ${r}.duration_seconds < ${b.maxSeconds} THEN ${i}`)
    .join(" ");
  return `(CASE ${whens} ELSE ${DURATION_BUCKETS.length - 1} END)`;
}
