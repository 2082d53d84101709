import { comparisonRange } from "@/lib/analytics/compare-range";
import { raw, sql } from "@/lib/clickhouse";
import { DURATION_BUCKETS, MODES, RECEIVER_TYPES, STATUSES, TYPES } from "@/lib/analytics/dims";
import type { Filters } from "@/lib/analytics/filters";
import {
  ENGAGEMENT_BUCKETS, round3, type BreakdownRow, type DurationBucketRow, type EngagementBucketRow, type Totals, type TotalsReport,
} from "@/lib/analytics/report-types";
import type { Scope } from "@/lib/analytics/scope";
import { appScope, tablesOf, type ChContext } from "../context";
import { CLOSED_VALUES, fromSignedCalls, HAS_RECORDING, withClosedValues } from "../conditions";
import { callSumsSql } from "./call-sums";
import { minutes } from "./shared";
import { callsPerParticipantQuery } from "./usage";

/** Totals (with the previous period), breakdowns, durations and engagement. */

/** Sums of the matching calls per combination of the categorical dimensions (at most a few hundred rows). */
interface CubeRow {
  type: string | null;
  mode: string | null;
  status: string | null;
  receiverType: string | null;
  hasRecording: number;
  calls: number;
  audioX1000: number;
  videoX1000: number;
  durS: number;
  parts: number;
  /** 1: the call starts before `splitAt` (cubeOf). */
  before: number;
}

/**
 * The cube of the matching calls; with `splitAt`, each combination also split by whether
 * the call starts before that instant — two adjacent periods from one read.
 */
async function cubeOf(ctx: ChContext, f: Filters, scope: Scope, signal?: AbortSignal, splitAt?: number): Promise<CubeRow[]> {
  const apps = appScope(ctx, f, scope);
  const t = tablesOf(ctx.ch);
  // Signed sums (the pre-aggregate's whole months and the signed rows around them: call-sums.ts): a combination whose
  // calls all cancelled sums to 0 and is left out (a breakdown lists `other` only when some call has one).
  const rows = await ctx.ch.rows<CubeRow & { callType: string | null; callMode: string | null; callStatus: string | null }>(
    sql`SELECT ${raw(CLOSED_VALUES)}, ${raw(HAS_RECORDING)} AS hasRecording, before, sum(c) AS calls,
        sum(ax) AS audioX1000, sum(vx) AS videoX1000, sum(ds) AS durS, sum(c * total_participants) AS parts
      FROM (${callSumsSql(t, f, apps.pks, splitAt)}) GROUP BY callType, callMode, callStatus, receiverType, hasRecording, before HAVING calls != 0`.text,
    signal,
  );
  return rows.map(withClosedValues);
}

function totalsOf(rows: CubeRow[]): Totals {
  let calls = 0, audio = 0, video = 0, durS = 0, parts = 0, rec = 0, unanswered = 0;
  for (const r of rows) {
    calls += r.calls;
    audio += r.audioX1000;
    video += r.videoX1000;
    durS += r.durS;
    parts += r.parts;
    if (r.hasRecording) rec += r.calls;
    if (r.status === "unanswered") unanswered += r.calls;
  }
  return {
    calls,
    audioMinutes: minutes(audio),
    videoMinutes: minutes(video),
    totalMinutes: minutes(audio + video),
    avgDurationSeconds: calls ? round3(durS / calls) : 0,
    avgParticipants: calls ? round3(parts / calls) : 0,
    recordingShare: calls ? round3(rec / calls) : 0,
    unansweredRate: calls ? round3(unanswered / calls) : 0,
  };
}

/** KPI totals of the filtered set, and of the period it is compared with (compare-range.ts). */
export async function getTotals(ctx: ChContext, f: Filters, scope: Scope, signal?: AbortSignal): Promise<TotalsReport> {
  if (f.from === undefined || f.to === undefined) return { current: totalsOf(await cubeOf(ctx, f, scope, signal)), previous: null, previousRange: null };
  const previousRange = comparisonRange({ from: f.from, to: f.to }, f.tz, f.compare);
  if (previousRange.to !== f.from) {
    // Not adjacent (month to date, last year): two reads rather than one over the gap.
    const [current, previous] = await Promise.all([cubeOf(ctx, f, scope, signal), cubeOf(ctx, { ...f, ...previousRange }, scope, signal)]);
    return { current: totalsOf(current), previous: totalsOf(previous), previousRange };
  }
  // Both periods in one read: [previous.from, to), split at `from`.
  const rows = await cubeOf(ctx, { ...f, from: previousRange.from }, scope, signal, f.from);
  return { current: totalsOf(rows.filter((r) => !r.before)), previous: totalsOf(rows.filter((r) => r.before)), previousRange };
}

/** The breakdown dimensions, in the report's order: their known values (anything else is `other`). */
const DIMENSIONS: Array<[BreakdownRow["dimension"], readonly string[], (r: CubeRow) => string | null]> = [
  ["type", TYPES, (r) => r.type],
  ["mode", MODES, (r) => r.mode],
  ["status", STATUSES, (r) => r.status],
  ["receiverType", RECEIVER_TYPES, (r) => r.receiverType],
  ["hasRecording", ["true", "false"], (r) => (r.hasRecording ? "true" : "false")],
];

/** Counts and minutes by each dimension's values: every known value (zeros too), then `other` when some call has one. */
export async function getBreakdowns(ctx: ChContext, f: Filters, scope: Scope, signal?: AbortSignal): Promise<BreakdownRow[]> {
  const rows = await cubeOf(ctx, f, scope, signal);
  const out: BreakdownRow[] = [];
  for (const [dimension, known, valueOf] of DIMENSIONS) {
    const acc = new Map<string, { calls: number; audio: number; video: number }>(known.map((v) => [v, { calls: 0, audio: 0, video: 0 }]));
    for (const r of rows) {
      const v = valueOf(r);
      const label = v !== null && known.includes(v) ? v : "other";
      const a = acc.get(label) ?? { calls: 0, audio: 0, video: 0 };
      a.calls += r.calls;
      a.audio += r.audioX1000;
      a.video += r.videoX1000;
      acc.set(label, a);
    }
    for (const [value, a] of acc) {
      out.push({ dimension, value, calls: a.calls, audioMinutes: minutes(a.audio), videoMinutes: minutes(a.video), totalMinutes: minutes(a.audio + a.video) });
    }
  }
  return out;
}

/**
 * The duration bucket of a call, in SQL (DURATION_BUCKETS: the first whose bound the duration
 * is under): the number of bounds the duration reaches, a sum of comparisons rather than a
 * `multiIf`, which 18.16 evaluates branch by branch into a column each (a scan of every call
 * row measured ~25% faster: decision 0034, session 18).
 */
export const DURATION_BUCKET_SQL = `(${DURATION_BUCKETS.slice(0, -1)
  .map((b) => `(duration_seconds >= ${b.maxSeconds})`)
  .join(" + ")})`;

/** Calls by totalDuration in fixed buckets: <1m, 1–5, 5–15, 15–30, 30–60, ≥60 minutes. */
export async function getDurationDistribution(ctx: ChContext, f: Filters, scope: Scope, signal?: AbortSignal): Promise<DurationBucketRow[]> {
  const apps = appScope(ctx, f, scope);
  const t = tablesOf(ctx.ch);
  const rows = await ctx.ch.rows<{ bucket: number; calls: number }>(
    sql`SELECT ${raw(DURATION_BUCKET_SQL)} AS bucket, sum(sign) AS calls ${fromSignedCalls(t, f, apps.pks)} GROUP BY bucket`.text,
    signal,
  );
  const byBucket = new Map(rows.map((r) => [r.bucket, r.calls]));
  return DURATION_BUCKETS.map((b, i) => ({
    bucket: b.key,
    label: b.label,
    minSeconds: i === 0 ? 0 : DURATION_BUCKETS[i - 1].maxSeconds,
    maxSeconds: Number.isFinite(b.maxSeconds) ? b.maxSeconds : null,
    calls: byBucket.get(i) ?? 0,
  }));
}

/** Calls per participant: how many participants (app × uid) are listed in 1, 2–5, … distinct calls. */
export async function getEngagement(ctx: ChContext, f: Filters, scope: Scope, signal?: AbortSignal): Promise<EngagementBucketRow[]> {
  const apps = appScope(ctx, f, scope);
  const rows = await ctx.ch.rows<{ calls: number; participants: number }>(
    sql`SELECT calls, count() AS participants FROM (${callsPerParticipantQuery(ctx, f, apps.pks)}) GROUP BY calls`.text,
    signal,
  );
  const counts = ENGAGEMENT_BUCKETS.map(() => 0);
  for (const r of rows) counts[ENGAGEMENT_BUCKETS.findIndex(([, max]) => max === null || r.calls <= max)] += r.participants;
  return ENGAGEMENT_BUCKETS.map(([min, max], i) => ({
    bucket: max === null ? `${min}+` : min === max ? String(min) : `${min}-${max}`,
    minCalls: min,
    maxCalls: max,
    participants: counts[i],
  }));
}
