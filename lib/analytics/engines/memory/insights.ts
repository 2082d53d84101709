import type { Db } from "@/db/client";
import { DIMENSIONS, DURATION_BUCKETS, RECORDING_WEIGHT, labelOf, type DimensionName } from "../../dims";
import type { Filters } from "../../filters";
import { resolveApps, type Scope } from "../../scope";
import {
  ENGAGEMENT_BUCKETS, MAX_CROSSINGS, round3, type BreakdownRow, type DurationBucketRow, type EngagementBucketRow, type HeatmapCell, type Totals, type TotalsReport,
} from "../../report-types";
import { cellCountsOf, cubeOf, heatmapOf, peopleOf, select, type Selection } from "./scan";
import type { AnalyticsStore } from "./store";
import { WEEKDAYS, nextLocalHourStart, offsetFromSegments, offsetSegments, type OffsetSegment } from "../../tz";


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
  for (let dims = 0; dims < 360; dims++) {
    const r: DimsRow = { dims, calls: 0, audio: 0, video: 0, durS: 0, parts: 0 };
    for (let cell = dims; cell < c.calls.length; cell += 360) {
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
  const unansweredCode = DIMENSIONS.status.values.indexOf("unanswered");
  for (const r of rows) {
    calls += r.calls;
    audio += r.audio;
    video += r.video;
    durS += r.durS;
    parts += r.parts;
    if (r.dims >= RECORDING_WEIGHT) rec += r.calls;
    if (Math.floor(r.dims / 12) % 5 === unansweredCode) unanswered += r.calls;
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

/** KPI totals of the filtered set, and of the previous period of equal length. */
export function getTotals(db: Db, f: Filters, scope: Scope): TotalsReport {
  const current = totalsOf(byDims(db, f, scope));
  if (f.from === undefined || f.to === undefined) return { current, previous: null, previousRange: null };
  const previousRange = { from: Math.max(0, f.from - (f.to - f.from)), to: f.from };
  const previous = totalsOf(byDims(db, { ...f, ...previousRange }, scope));
  return { current, previous, previousRange };
}


/** Counts and minutes by type, mode, status, receiverType and recording presence
 * (values Callboard does not know are grouped as `other`). */
export function getBreakdowns(db: Db, f: Filters, scope: Scope): BreakdownRow[] {
  const rows = byDims(db, f, scope);
  const out: BreakdownRow[] = [];
  const decode: Array<[BreakdownRow["dimension"], (dims: number) => string, string[]]> = [
    ...(Object.keys(DIMENSIONS) as DimensionName[]).map((name): [BreakdownRow["dimension"], (d: number) => string, string[]] => {
      const weight = DIMENSIONS[name].weight;
      const size = DIMENSIONS[name].values.length + 1;
      return [name, (d) => labelOf(name, Math.floor((d % RECORDING_WEIGHT) / weight) % size), [...DIMENSIONS[name].values]];
    }),
    ["hasRecording", (d) => (d >= RECORDING_WEIGHT ? "true" : "false"), ["true", "false"]],
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
    const b = Math.floor(cell / 360);
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


/**
 * Concurrent calls by weekday × hour in `tz`: for every local hour of the window (the
 * hours starting in [from, to), or the data's extent), the calls overlapping it
 * ([start, end) meets the hour; a call counts in every hour it overlaps, an ongoing one
 * in its start hour). Here `from`/`to` bound the hours examined, not the calls' start.
 */
export function getConcurrencyHeatmap(db: Db, f: Filters, scope: Scope): HeatmapCell[] {
  const appPks = resolveApps(db, f, scope);
  const cells = WEEKDAYS.flatMap((name, weekday) => Array.from({ length: 24 }, (_, hour) => ({ weekday, weekdayName: name, hour, calls: 0, hours: 0, average: 0 })));
  let lo = f.from;
  let hi = f.to;
  if (lo === undefined || hi === undefined) {
    // The data's extent. Window semantics: every call is a candidate, whatever its start.
    const { store: s, sel, count } = select(db, f, appPks, { ignoreTime: true });
    const lastQuarter = quarterEnd(s);
    const start = s.start.a;
    if (count === 0) return cells;
    let min = Infinity;
    let max = -Infinity;
    for (let k = 0; k < count; k++) {
      const i = sel[k];
      min = Math.min(min, Math.floor(start[i] / 900));
      max = Math.max(max, lastQuarter(i));
    }
    lo ??= min * 900;
    hi ??= max * 900 + 900;
  }
  const segments = offsetSegments(f.tz, lo - 86_400, hi + 86_400);
  const fromH = nextLocalHourStart(segments, lo);
  const toH = nextLocalHourStart(segments, hi);
  if (toH <= fromH) return cells;
  const qLo = fromH / 900;
  const qHi = toH / 900;
  // Tables need whole quarters (every zone offset in use since the 1970s is a multiple of 15 minutes).
  const tabular = qHi - qLo <= MAX_TABLE_QUARTERS && Number.isInteger(qLo) && Number.isInteger(qHi) && segments.every((x) => x.offset % 900 === 0);
  const tables = tabular ? quarterTables(f.tz, segments, qLo, qHi) : undefined;
  const counts = tables
    ? heatmapOf(db, f, appPks, qLo, qHi, tables.cellQ, tables.nextStart, MAX_CROSSINGS)
    : heatmapWalk(select(db, f, appPks, { ignoreTime: true }), segments, qLo, qHi);
  for (let c = 0; c < counts.length; c++) cells[c].calls = counts[c];
  // Hours of the window per cell (a DST day has 23 or 25).
  for (let t = fromH; t < toH; ) {
    cells[cellOf(segments, t)].hours++;
    t = nextLocalHourStart(segments, t + 1);
  }
  for (const c of cells) c.average = c.hours ? round3(c.calls / c.hours) : 0;
  return cells;
}

/** Windows up to this many quarter hours (~28 years) count through per-quarter tables. */
const MAX_TABLE_QUARTERS = 1 << 20;

/** Last quarter hour a call counts in (its start quarter for an ongoing call). */
function quarterEnd(s: AnalyticsStore): (i: number) => number {
  const start = s.start.a, span = s.span.a;
  return (i) => {
    const q0 = Math.floor(start[i] / 900);
    const e = start[i] + span[i];
    return Math.max(q0, Math.min(Math.floor((e - 1) / 900), q0 + MAX_CROSSINGS));
  };
}

interface QuarterTables {
  /** Heatmap cell of the local hour holding quarter qLo + k. */
  cellQ: Uint8Array;
  /** First quarter ≥ qLo + k starting a local hour (qHi if none); one extra entry = qHi. */
  nextStart: Int32Array;
}

/** The dashboard asks the same window again and again: the last few tables are kept. */
const tableCache = new Map<string, QuarterTables>();

/**
 * Per quarter hour of [qLo, qHi): its local hour's cell, and where the next local hour
 * starts — with the same offset rule as the walk (`offsetFromSegments` at the quarter).
 */
function quarterTables(tz: string, segments: OffsetSegment[], qLo: number, qHi: number): QuarterTables {
  const key = `${tz}|${qLo}|${qHi}`;
  const hit = tableCache.get(key);
  if (hit) return hit;
  const n = qHi - qLo;
  const cellQ = new Uint8Array(n);
  const nextStart = new Int32Array(n + 1);
  const starts = new Uint8Array(n);
  for (let k = 0; k < n; k++) {
    const t = (qLo + k) * 900;
    const off = offsetFromSegments(segments, t);
    cellQ[k] = cellOf(segments, t);
    starts[k] = (t + off) % 3600 === 0 ? 1 : 0;
  }
  nextStart[n] = qHi;
  for (let k = n - 1; k >= 0; k--) nextStart[k] = starts[k] ? qLo + k : nextStart[k + 1];
  const tables = { cellQ, nextStart };
  if (tableCache.size >= 8) tableCache.delete(tableCache.keys().next().value!);
  tableCache.set(key, tables);
  return tables;
}

/** The heatmap's counts by walking each call's quarters (windows too long for tables). */
function heatmapWalk(x: Selection, segments: OffsetSegment[], qLo: number, qHi: number): Float64Array {
  const { store: s, sel, count } = x;
  const start = s.start.a;
  const lastQuarter = quarterEnd(s);
  const counts = new Float64Array(7 * 24);
  const changes = segments.slice(1).map((c) => c.from);
  for (let k = 0; k < count; k++) {
    const i = sel[k];
    const q0 = Math.floor(start[i] / 900);
    if (q0 >= qHi) continue;
    const last = Math.min(lastQuarter(i), qHi - 1);
    if (last < qLo && !(q0 >= qLo)) continue;
    // A call counts in its start hour, then at every local hour start it runs past.
    if (q0 >= qLo) counts[cellOf(segments, q0 * 900)]++;
    const a = Math.max(q0 + 1, qLo) * 900;
    const b = last * 900;
    if (b < a) continue;
    if (changes.some((c) => c > a - 900 && c <= b)) {
      for (let t = a; t <= b; t += 900) if ((t + offsetFromSegments(segments, t)) % 3600 === 0) counts[cellOf(segments, t)]++;
      continue;
    }
    const off = offsetFromSegments(segments, a);
    for (let h = Math.ceil((a + off) / 3600); h * 3600 - off <= b; h++) counts[hourCell(h)]++;
  }
  return counts;
}

/** Heatmap cell (weekday × 24 + hour) of local hour number h (hours since the local epoch). */
function hourCell(h: number): number {
  const day = Math.floor(h / 24);
  return (((day + 4) % 7 + 7) % 7) * 24 + (h - day * 24);
}

function cellOf(segments: OffsetSegment[], t: number): number {
  return hourCell(Math.floor((t + offsetFromSegments(segments, t)) / 3600));
}



/** Calls per participant: how many participants (app × uid) are listed in 1, 2–5, … calls. */
export function getEngagement(db: Db, f: Filters, scope: Scope): EngagementBucketRow[] {
  const p = peopleOf(db, f, resolveApps(db, f, scope), false);
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
