import { sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { DIMENSIONS, DURATION_BUCKETS, RECORDING_WEIGHT, labelOf, type DimensionName } from "./dims";
import type { Filters } from "./filters";
import { and, callFacts, participantFacts, rawConditions, resolveApps, round3, type Scope } from "./query";
import { MAX_CROSSINGS } from "./rollup-sql";
import { WEEKDAYS, nextLocalHourStart, offsetFromSegments, offsetSegments, offsetSql } from "./tz";

interface DimsRow {
  dims: number;
  calls: number;
  audio: number;
  video: number;
  durS: number;
  parts: number;
}

function byDims(db: Db, f: Filters, scope: Scope): DimsRow[] {
  const appPks = resolveApps(db, f, scope);
  return db.all<DimsRow>(sql`SELECT dims, sum(calls) AS calls, sum(audio) AS audio, sum(video) AS video, sum(dur_s) AS durS,
      sum(parts) AS parts FROM (${callFacts(f, appPks, { grain: "day" })}) GROUP BY dims`);
}

export interface Totals {
  calls: number;
  audioMinutes: number;
  videoMinutes: number;
  /** audioMinutes + videoMinutes. */
  totalMinutes: number;
  avgDurationSeconds: number;
  avgParticipants: number;
  /** Share (0..1) of calls with a recording. */
  recordingShare: number;
  /** Share (0..1) of calls with status `unanswered`. */
  unansweredRate: number;
}

export interface TotalsReport {
  current: Totals;
  /** The same filters over the equally long period just before [from, to); null without both bounds. */
  previous: Totals | null;
  previousRange: { from: number; to: number } | null;
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

export interface BreakdownRow {
  dimension: DimensionName | "hasRecording";
  value: string;
  calls: number;
  audioMinutes: number;
  videoMinutes: number;
  totalMinutes: number;
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

export interface DurationBucketRow {
  bucket: string;
  label: string;
  /** Inclusive lower bound, seconds. */
  minSeconds: number;
  /** Exclusive upper bound, seconds (null: no bound). */
  maxSeconds: number | null;
  calls: number;
}

/** Calls by totalDuration in fixed buckets: <1m, 1–5, 5–15, 15–30, 30–60, ≥60 minutes. */
export function getDurationDistribution(db: Db, f: Filters, scope: Scope): DurationBucketRow[] {
  const appPks = resolveApps(db, f, scope);
  const rows = db.all<{ b: number; calls: number }>(sql`SELECT dur_bucket AS b, sum(calls) AS calls
    FROM (${callFacts(f, appPks, { grain: "day" })}) GROUP BY dur_bucket`);
  const byBucket = new Map(rows.map((r) => [r.b, r.calls]));
  return DURATION_BUCKETS.map((b, i) => ({
    bucket: b.key,
    label: b.label,
    minSeconds: i === 0 ? 0 : DURATION_BUCKETS[i - 1].maxSeconds,
    maxSeconds: Number.isFinite(b.maxSeconds) ? b.maxSeconds : null,
    calls: byBucket.get(i) ?? 0,
  }));
}

export interface HeatmapCell {
  /** 0 = Sunday … 6 = Saturday, in `tz`. */
  weekday: number;
  weekdayName: string;
  /** 0..23, local hour in `tz`. */
  hour: number;
  /** Sum over the window's hours of the calls overlapping that hour. */
  calls: number;
  /** How many such hours the window holds (divide for an average). */
  hours: number;
  /** calls / hours. */
  average: number;
}

/**
 * Concurrent calls by weekday × hour in `tz`: for every local hour of the window (the
 * hours starting in [from, to), or the data's extent), the calls overlapping it
 * ([start, end) meets the hour; a call counts in every hour it overlaps, an ongoing one
 * in its start hour). Here `from`/`to` bound the hours examined, not the calls' start.
 */
export function getConcurrencyHeatmap(db: Db, f: Filters, scope: Scope): HeatmapCell[] {
  const appPks = resolveApps(db, f, scope);
  const empty = () => WEEKDAYS.flatMap((name, weekday) => Array.from({ length: 24 }, (_, hour) => ({ weekday, weekdayName: name, hour, calls: 0, hours: 0, average: 0 })));
  // Window semantics: the rollup's bucket range, not the start filter.
  const window = { ...f, from: undefined, to: undefined };
  let lo = f.from;
  let hi = f.to;
  if (lo === undefined || hi === undefined) {
    const facts = callFacts(window, appPks, { grain: "q15" });
    const ext = db.get<{ lo: number | null; hi: number | null }>(sql`SELECT min(unit) * 900 AS lo, max(unit) * 900 + 900 AS hi FROM (${facts})`);
    if (!ext || ext.lo === null || ext.hi === null) return empty();
    lo ??= ext.lo;
    hi ??= ext.hi;
  }
  const segments = offsetSegments(f.tz, lo - 86_400, hi + 86_400);
  const fromH = nextLocalHourStart(segments, lo);
  const toH = nextLocalHourStart(segments, hi);
  const cells = empty();
  if (toH <= fromH) return cells;
  if (f.uid === undefined) {
    // Hour starts are 15-minute aligned: the rollup alone covers the window.
    const local = `(unit * 900 + ${offsetSql(segments, "unit * 900")})`;
    const rows = db.all<{ wd: number; h: number; calls: number }>(sql`SELECT ((${sql.raw(local)} / 86400) + 4) % 7 AS wd,
        (${sql.raw(local)} % 86400) / 3600 AS h,
        sum(calls + CASE WHEN ${sql.raw(local)} % 3600 = 0 THEN crossing ELSE 0 END) AS calls
      FROM (${callFacts({ ...window, from: fromH, to: toH }, appPks, { grain: "q15" })}) GROUP BY 1, 2`);
    for (const r of rows) cells[r.wd * 24 + r.h].calls = r.calls;
  } else {
    // The uid filter has no rollup: the same rule over the raw calls.
    const cellOf = (t: number) => {
      const localT = t + offsetFromSegments(segments, t);
      return cells[((Math.floor(localT / 86_400) + 4) % 7) * 24 + Math.floor((localT % 86_400) / 3600)];
    };
    const rows = db.all<{ s: number; e: number }>(sql`SELECT c.start_at AS s, max(coalesce(c.ended_at, c.start_at), c.start_at) AS e
      FROM calls c WHERE ${and([...rawConditions(f, appPks), sql`c.start_at < ${toH}`])}`);
    const qLo = fromH / 900;
    const qHi = toH / 900;
    for (const { s, e } of rows) {
      const q0 = Math.floor(s / 900);
      if (q0 >= qLo && q0 < qHi) cellOf(q0 * 900).calls++;
      const last = Math.min(Math.floor((e - 1) / 900), q0 + MAX_CROSSINGS);
      for (let b = Math.max(q0 + 1, qLo); b <= last && b < qHi; b++) {
        const t = b * 900;
        if ((t + offsetFromSegments(segments, t)) % 3600 === 0) cellOf(t).calls++;
      }
    }
  }
  // Hours of the window per cell (a DST day has 23 or 25).
  for (let t = fromH; t < toH; ) {
    const localT = t + offsetFromSegments(segments, t);
    const cell = cells[(((Math.floor(localT / 86_400) + 4) % 7) * 24) + Math.floor((localT % 86_400) / 3600)];
    cell.hours++;
    t = nextLocalHourStart(segments, t + 1);
  }
  for (const c of cells) c.average = c.hours ? round3(c.calls / c.hours) : 0;
  return cells;
}

export interface EngagementBucketRow {
  bucket: string;
  /** Inclusive bounds on the number of calls a participant is listed in (max null: no bound). */
  minCalls: number;
  maxCalls: number | null;
  participants: number;
}

export const ENGAGEMENT_BUCKETS = [
  [1, 1], [2, 5], [6, 10], [11, 25], [26, 50], [51, 100], [101, null],
] as const satisfies ReadonlyArray<readonly [number, number | null]>;

/** Calls per participant: how many participants (app × uid) are listed in 1, 2–5, … calls. */
export function getEngagement(db: Db, f: Filters, scope: Scope): EngagementBucketRow[] {
  const appPks = resolveApps(db, f, scope);
  const rows = db.all<{ n: number; people: number }>(sql`SELECT n, count(*) AS people FROM (
      SELECT sum(listed) AS n FROM (${participantFacts(f, appPks)}) GROUP BY app_pk, uid HAVING sum(listed) > 0
    ) GROUP BY n`);
  return ENGAGEMENT_BUCKETS.map(([min, max]) => ({
    bucket: max === null ? `${min}+` : min === max ? String(min) : `${min}-${max}`,
    minCalls: min,
    maxCalls: max,
    participants: rows.filter((r) => r.n >= min && (max === null || r.n <= max)).reduce((s, r) => s + r.people, 0),
  }));
}
