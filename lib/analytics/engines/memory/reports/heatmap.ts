import type { Db } from "@/db/client";
import type { Filters } from "../../../filters";
import { MAX_CROSSINGS, round3, type HeatmapCell } from "../../../report-types";
import { resolveApps, type Scope } from "../../../scope";
import { WEEKDAYS, nextLocalHourStart, offsetFromSegments, offsetSegments, type OffsetSegment } from "@/lib/time/tz";
import { heatExtentOf, heatFromQuarters, heatmapOf, heatQuartersOf } from "../scan/heat";
import { select, type Selection } from "../scan/selection";
import type { AnalyticsStore } from "../store/store";

/** The heatmap report: concurrent calls by weekday × local hour (the kernel: scan/heat.ts). */

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
  const open = lo === undefined || hi === undefined;
  // Under a filter beyond apps every slot is scanned: one pass gives the counts per quarter
  // hour and, for an open window, the extent too (undefined: the blocks' counts serve).
  let quarters = open ? heatQuartersOf(db, f, appPks, undefined, MAX_CROSSINGS, MAX_TABLE_QUARTERS) : undefined;
  if (lo === undefined || hi === undefined) {
    // The data's extent. Window semantics: every call is a candidate, whatever its start.
    const { count, minQ: min, maxQ: max } = quarters ?? heatExtentOf(db, f, appPks, MAX_CROSSINGS);
    if (count === 0) return cells;
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
  if (tables && !open) quarters = heatQuartersOf(db, f, appPks, { a: qLo, b: qHi }, MAX_CROSSINGS, MAX_TABLE_QUARTERS);
  const counts = !tables
    ? heatmapWalk(select(db, f, appPks, { ignoreTime: true }), segments, qLo, qHi)
    : quarters
      ? heatFromQuarters(quarters, qLo, qHi, tables.cellQ, tables.nextStart)
      : heatmapOf(db, f, appPks, qLo, qHi, tables.cellQ, tables.nextStart, MAX_CROSSINGS);
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
