import { comparisonRange } from "@/lib/analytics/compare-range";
import type { Db } from "@/db/client";
import { DIMENSION_VALUES, DURATION_BUCKETS } from "../../../dims";
import type { Filters } from "../../../filters";
import { resolveApps, type Scope } from "../../../scope";
import {
  ENGAGEMENT_BUCKETS, round3, type BreakdownRow, type DurationBucketRow, type EngagementBucketRow, type Totals, type TotalsReport,
} from "../../../report-types";
import { bucketOfCell, codeOf, DIMENSION_NAMES, DIMS, dimCode, labelOf, recordingOf } from "../scan/cell-codec";
import { cellCountsOf, cubeOf } from "../scan/cube";
import { peopleOf } from "../scan/people";


interface DimsRow {
  dims: number;
  calls: number;
  audio: number;
  video: number;
  durS: number;
  parts: number;
}

function byDims(db: Db, f: Filters, scope: Scope): DimsRow[] {
  const c = cubeOf(db, f, resolveApps(db, f, scope));
  const rows: DimsRow[] = [];
  for (let dims = 0; dims < DIMS; dims++) {
    const r: DimsRow = { dims, calls: 0, audio: 0, video: 0, durS: 0, parts: 0 };
    for (let cell = dims; cell < c.calls.length; cell += DIMS) {
      r.calls += c.calls[cell];
      r.audio += c.audio[cell];
      r.video += c.video[cell];
      r.durS += c.durS[cell];
      r.parts += c.parts[cell];
    }
    if (r.calls > 0) rows.push(r);
  }
  return rows;
}



function totalsOf(rows: DimsRow[]): Totals {
  let calls = 0, audio = 0, video = 0, durS = 0, parts = 0, rec = 0, unanswered = 0;
  const unansweredCode = codeOf("status", "unanswered");
  for (const r of rows) {
    calls += r.calls;
    audio += r.audio;
    video += r.video;
    durS += r.durS;
    parts += r.parts;
    if (recordingOf(r.dims) === 1) rec += r.calls;
    if (dimCode(r.dims, "status") === unansweredCode) unanswered += r.calls;
  }
  return {
    calls,
    audioMinutes: round3(audio),
    videoMinutes: round3(video),
    totalMinutes: round3(audio + video),
    avgDurationSeconds: calls ? round3(durS / calls) : 0,
    avgParticipants: calls ? round3(parts / calls) : 0,
    recordingShare: calls ? round3(rec / calls) : 0,
    unansweredRate: calls ? round3(unanswered / calls) : 0,
  };
}

/** KPI totals of the filtered set, and of the period it is compared with (compare-range.ts). */
export function getTotals(db: Db, f: Filters, scope: Scope): TotalsReport {
  const current = totalsOf(byDims(db, f, scope));
  if (f.from === undefined || f.to === undefined) return { current, previous: null, previousRange: null };
  const previousRange = comparisonRange({ from: f.from, to: f.to }, f.tz, f.compare);
  const previous = totalsOf(byDims(db, { ...f, ...previousRange }, scope));
  return { current, previous, previousRange };
}


/** Counts and minutes by type, mode, status, receiverType and recording presence
 * (values Callboard does not know are grouped as `other`). */
export function getBreakdowns(db: Db, f: Filters, scope: Scope): BreakdownRow[] {
  const rows = byDims(db, f, scope);
  const out: BreakdownRow[] = [];
  const decode: Array<[BreakdownRow["dimension"], (dims: number) => string, string[]]> = [
    ...DIMENSION_NAMES.map((name): [BreakdownRow["dimension"], (d: number) => string, string[]] => [name, (d) => labelOf(name, dimCode(d, name)), [...DIMENSION_VALUES[name]]]),
    ["hasRecording", (d) => (recordingOf(d) === 1 ? "true" : "false"), ["true", "false"]],
  ];
  for (const [dimension, valueOf, known] of decode) {
    const acc = new Map<string, { calls: number; audio: number; video: number }>(known.map((v) => [v, { calls: 0, audio: 0, video: 0 }]));
    for (const r of rows) {
      const v = valueOf(r.dims);
      const a = acc.get(v) ?? { calls: 0, audio: 0, video: 0 };
      a.calls += r.calls;
      a.audio += r.audio;
      a.video += r.video;
      acc.set(v, a);
    }
    for (const [value, a] of acc) {
      out.push({ dimension, value, calls: a.calls, audioMinutes: round3(a.audio), videoMinutes: round3(a.video), totalMinutes: round3(a.audio + a.video) });
    }
  }
  return out;
}


/** Calls by totalDuration in fixed buckets: <1m, 1–5, 5–15, 15–30, 30–60, ≥60 minutes. */
export function getDurationDistribution(db: Db, f: Filters, scope: Scope): DurationBucketRow[] {
  const calls = cellCountsOf(db, f, resolveApps(db, f, scope));
  const byBucket = new Map<number, number>();
  for (let cell = 0; cell < calls.length; cell++) {
    const b = bucketOfCell(cell);
    byBucket.set(b, (byBucket.get(b) ?? 0) + calls[cell]);
  }
  return DURATION_BUCKETS.map((b, i) => ({
    bucket: b.key,
    label: b.label,
    minSeconds: i === 0 ? 0 : DURATION_BUCKETS[i - 1].maxSeconds,
    maxSeconds: Number.isFinite(b.maxSeconds) ? b.maxSeconds : null,
    calls: byBucket.get(i) ?? 0,
  }));
}




/** Calls per participant: how many participants (app × uid) are listed in 1, 2–5, … calls. */
export function getEngagement(db: Db, f: Filters, scope: Scope): EngagementBucketRow[] {
  const p = peopleOf(db, f, resolveApps(db, f, scope), "calls");
  const counts = ENGAGEMENT_BUCKETS.map(() => 0);
  for (const u of p.ids) {
    const n = p.listed[u];
    const b = ENGAGEMENT_BUCKETS.findIndex(([, max]) => max === null || n <= max);
    counts[b]++;
  }
  return ENGAGEMENT_BUCKETS.map(([min, max], i) => ({
    bucket: max === null ? `${min}+` : min === max ? String(min) : `${min}-${max}`,
    minCalls: min,
    maxCalls: max,
    participants: counts[i],
  }));
}
