import { and, raw, sql, type Sql } from "@/lib/clickhouse";
import { HEATMAP_MAX_CROSSINGS, HEATMAP_QUARTERS_SQL } from "@/lib/clickhouse/schema-v2";
import type { Filters } from "@/lib/analytics/filters";
import { round3, type HeatmapCell } from "@/lib/analytics/report-types";
import type { Scope } from "@/lib/analytics/scope";
import { WEEKDAYS, nextLocalHourStart, offsetSegments, type OffsetSegment } from "@/lib/time/tz";
import { appScope, tablesOf, type ChContext } from "../context";
import { callConditions, timeConditions } from "../conditions";
import { preAggregated } from "./call-sums";

/**
 * Concurrent calls by weekday × local hour, with the in-memory engine's meaning: for
 * every local hour of the window (the hours starting in [from, to), or the data's extent)
 * the calls overlapping it — a call counts in its start hour, then at every local hour
 * start it runs past (an ongoing call in its start hour only; at most MAX_CROSSINGS
 * quarter hours after its start). `from`/`to` bound the hours, not the calls' start.
 *
 * Two sources of per quarter hour figures, laid out the same way here:
 * - the pre-aggregate `concurrency_by_quarter` (decision 0034, "The heatmap from a
 *   pre-aggregate (session 18)"), whenever its dimensions answer the filters (apps, time,
 *   closed sets: `quarterSumsAnswer`): per quarter, the calls starting in it and the calls
 *   running at its start, already summed;
 * - otherwise (a uid, the weekday/hour drill-down, the participant count, hasRecording, a
 *   bound past a DateTime) the signed rows:
 *   per quarter, the calls starting in it and the change in the number of calls running
 *   past it (+1 where a call's run begins, −1 after it ends), added up here.
 * Either way the quarters are mapped to local hours in Node (Node's time zone data, as the
 * in-memory engine): only a quarter starting a local hour counts its running calls, so DST
 * days and +05:30 / +05:45 zones agree.
 */

/** Calls that run longer than this many quarter hours stop counting after it (as the in-memory engine). */
const MAX_CROSSINGS = HEATMAP_MAX_CROSSINGS;

/** The largest second a DateTime holds: a window reaching past it reads the signed rows. */
const MAX_DATETIME = 4_294_967_295;

/** Heatmap cell (weekday × 24 + hour) of local hour number h (hours since the local epoch; 1970-01-01 was a Thursday). */
function hourCell(h: number): number {
  const day = Math.floor(h / 24);
  return (((day + 4) % 7) + 7) % 7 * 24 + (h - day * 24);
}

/** The zone's offset at increasing instants: one pass over the segments. */
function offsetCursor(segments: OffsetSegment[]): (t: number) => number {
  let k = 0;
  return (t) => {
    while (k + 1 < segments.length && t >= segments[k + 1].from) k++;
    while (k > 0 && t < segments[k].from) k--;
    return segments[k].offset;
  };
}

/**
 * Per quarter hour q: calls starting in it, the change in calls running past it (signed
 * rows) or the calls running at its start (pre-aggregate: `running`, `delta` 0), and
 * whether some call's last quarter is q.
 */
interface QuarterEvents {
  q: number;
  starts: number;
  delta: number;
  running: number;
  last: number;
}

/**
 * One read of the matching calls' signed rows: per quarter hour, the calls starting, +1
 * where a call's run past its start quarter begins and −1 after it ends, and a mark on
 * each call's last quarter (the data's extent when the window is open), every one times
 * the row's sign (a cancelled state and its cancel row add up to nothing). `window`: only the calls that
 * can touch these quarters (bounds on start_at the table can use); the sweep counts only
 * inside it. ClickHouse groups the rows twice, by start quarter and by last quarter (two
 * plain integer GROUP BYs: a third of the time of one GROUP BY over four events a row),
 * and the events are laid out per quarter here.
 */
async function quarterEvents(ctx: ChContext, conds: Sql[], window: { qLo: number; qHi: number } | undefined, signal?: AbortSignal): Promise<QuarterEvents[]> {
  const t = tablesOf(ctx.ch);
  const bounded = window
    ? [...conds, ...timeConditions({ to: window.qHi * 900, from: Math.max(0, (window.qLo - MAX_CROSSINGS - 1) * 900) })]
    : conds;
  const touching = window ? sql`WHERE q_start < ${window.qHi} AND q_last >= ${window.qLo}` : raw("");
  const calls = sql`(SELECT toInt64(sign) AS s, toInt64(q_last > q_start) * s AS runs, q_start, q_last FROM (SELECT sign, ${raw(HEATMAP_QUARTERS_SQL)} FROM ${t.calls} WHERE ${and(bounded)}) ${touching})`;
  const rows = await ctx.ch.rows<{ q: number; starts: number; runsFrom: number; runsTo: number; last: number }>(
    sql`SELECT q_start AS q, sum(s) AS starts, sum(runs) AS runsFrom, toInt64(0) AS runsTo, toInt64(0) AS last FROM ${calls} GROUP BY q
      UNION ALL
      SELECT q_last AS q, toInt64(0) AS starts, toInt64(0) AS runsFrom, sum(runs) AS runsTo, sum(s) AS last FROM ${calls} GROUP BY q`.text,
    signal,
  );
  const byQuarter = new Map<number, QuarterEvents>();
  const at = (q: number) => {
    let e = byQuarter.get(q);
    if (!e) byQuarter.set(q, (e = { q, starts: 0, delta: 0, running: 0, last: 0 }));
    return e;
  };
  for (const r of rows) {
    if (r.starts) at(r.q).starts += r.starts;
    if (r.runsFrom) at(r.q + 1).delta += r.runsFrom;
    if (r.runsTo) at(r.q + 1).delta -= r.runsTo;
    if (r.last) at(r.q).last += r.last;
  }
  return [...byQuarter.values()].filter((e) => e.starts !== 0 || e.delta !== 0 || e.last !== 0).sort((a, b) => a.q - b.q);
}

/**
 * The same per quarter figures from `concurrency_by_quarter`: the calls starting in each
 * quarter and running at its start, summed by its view (cancelled states subtract
 * themselves), and the calls whose last quarter it is. `window`: the quarters [qLo, qHi)
 * alone (one range of the key per app); none: every quarter (the open window needs the
 * extent). Each shard sends its quarters, not its rows.
 */
async function quarterSums(ctx: ChContext, conds: Sql[], window: { qLo: number; qHi: number } | undefined, signal?: AbortSignal): Promise<QuarterEvents[]> {
  const t = tablesOf(ctx.ch);
  const inWindow = window ? [raw(`quarter >= toDateTime(${window.qLo * 900})`), raw(`quarter < toDateTime(${window.qHi * 900})`)] : [];
  const rows = await ctx.ch.rows<{ q: number; starts: number; running: number; last: number }>(
    sql`SELECT intDiv(toInt64(toUInt32(quarter)), 900) AS q, sum(starts) AS starts, sum(running) AS running, sum(last) AS last
      FROM ${t.concurrencyByQuarter} WHERE ${and([...conds, ...inWindow])} GROUP BY q
      HAVING starts != 0 OR running != 0 OR last != 0 ORDER BY q`.text,
    signal,
  );
  return rows.map((r) => ({ q: Number(r.q), starts: Number(r.starts), delta: 0, running: Number(r.running), last: Number(r.last) }));
}

/**
 * Whether concurrency_by_quarter answers `f`: apps, time and the closed sets only (call-sums.ts
 * `preAggregated`, and neither the participant count nor hasRecording: not its dimensions).
 */
function quarterSumsAnswer(f: Filters): boolean {
  return preAggregated(f) && f.participantsCount === undefined && f.hasRecording === undefined;
}

/** Where the heatmap reads its quarters: the pre-aggregate when it can answer (the default), or the signed rows always (the bench's A/B, a test's check). */
export type HeatmapSource = "best" | "rows";

export async function getConcurrencyHeatmap(ctx: ChContext, f: Filters, scope: Scope, signal?: AbortSignal, source: HeatmapSource = "best"): Promise<HeatmapCell[]> {
  const apps = appScope(ctx, f, scope);
  const t = tablesOf(ctx.ch);
  const cells = WEEKDAYS.flatMap((name, weekday) => Array.from({ length: 24 }, (_, hour) => ({ weekday, weekdayName: name, hour, calls: 0, hours: 0, average: 0 })));
  const conds = callConditions(t, f, apps.pks, { ignoreTime: true });
  // Every offset in use since the 1970s is a multiple of 15 minutes: local hours start on quarter hours.
  const quarters = (lo: number, hi: number) => {
    const segments = offsetSegments(f.tz, lo - 86_400, hi + 86_400);
    const fromH = nextLocalHourStart(segments, lo);
    const toH = nextLocalHourStart(segments, hi);
    return { segments, fromH, toH, qLo: Math.ceil(fromH / 900), qHi: Math.ceil(toH / 900) };
  };
  let window = f.from !== undefined && f.to !== undefined ? quarters(f.from, f.to) : undefined;
  if (window && window.toH <= window.fromH) return cells;
  // An open window is the matching calls' extent: the same read gives it (first start, last quarter).
  // The pre-aggregate answers the filters it has the dimensions of, over quarters a DateTime holds.
  const fromSums = source === "best" && quarterSumsAnswer(f) && (window === undefined || window.qHi * 900 <= MAX_DATETIME);
  const events = fromSums ? await quarterSums(ctx, conds, window, signal) : await quarterEvents(ctx, conds, window, signal);
  if (!window) {
    if (events.length === 0) return cells;
    const qMin = events.find((e) => e.starts !== 0)!.q;
    const qMax = events.reduce((m, e) => (e.last ? Math.max(m, e.q) : m), -Infinity);
    window = quarters(f.from ?? qMin * 900, f.to ?? qMax * 900 + 900);
    if (window.toH <= window.fromH) return cells;
  }
  const { segments, fromH, toH, qLo, qHi } = window;
  const offsetAt = offsetCursor(segments);
  const cellAt = (time: number) => hourCell(Math.floor((time + offsetAt(time)) / 3600));
  // Calls running at q: the deltas up to q, those before the window included.
  let running = 0;
  for (let k = 0; k < events.length; k++) {
    const e = events[k];
    if (e.starts && e.q >= qLo && e.q < qHi) cells[cellAt(e.q * 900)].calls += e.starts;
    if (fromSums) {
      // The calls running at this quarter's start, counted where it starts a local hour.
      const time = e.q * 900;
      if (e.running && e.q >= qLo && e.q < qHi && (time + offsetAt(time)) % 3600 === 0) cells[cellAt(time)].calls += e.running;
      continue;
    }
    running += e.delta;
    if (running === 0) continue;
    // Calls running past the local hour starts among quarters [e.q, next event), inside the window.
    const end = Math.min(k + 1 < events.length ? events[k + 1].q : qHi, qHi);
    for (let q = Math.max(e.q, qLo); q < end; q++) {
      const time = q * 900;
      if ((time + offsetAt(time)) % 3600 === 0) cells[cellAt(time)].calls += running;
    }
  }
  // Hours of the window per cell (a DST day has 23 or 25).
  const hourAt = offsetCursor(segments);
  for (let time = fromH; time < toH; time = nextLocalHourStart(segments, time + 1)) cells[hourCell(Math.floor((time + hourAt(time)) / 3600))].hours++;
  for (const c of cells) c.average = c.hours ? round3(c.calls / c.hours) : 0;
  return cells;
}
