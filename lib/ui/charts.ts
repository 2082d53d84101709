/**
 * Chart and tile data from the analytics API's rows. Pure functions (tested in
 * charts.test.ts); components only draw what these return.
 */
import type { BreakdownRow, CallDetail, DailyUsageRow, DurationBucketRow, EngagementBucketRow, HeatmapCell, Totals, TotalsReport } from "@/lib/analytics";
import { groupByPerson } from "./people";
import { label } from "@/lib/platform/labels";
import { change, changePoints, formatCount, formatDecimal, formatMinutes, formatPercent, formatSeconds, type Change } from "./format";

export interface KpiTile {
  key: keyof Totals;
  label: string;
  value: string;
  previous: string | null;
  change: Change;
  /** Whether a rise is good news (unanswered rate: no). */
  higherIsBetter: boolean;
}

const TILE_SPECS: Array<{ key: keyof Totals; label: string; format: (n: number) => string; points?: boolean; higherIsBetter?: boolean }> = [
  { key: "calls", label: "Calls", format: formatCount },
  { key: "audioMinutes", label: "Participant minutes, audio", format: formatMinutes },
  { key: "videoMinutes", label: "Participant minutes, video", format: formatMinutes },
  { key: "avgDurationSeconds", label: "Average call duration", format: formatSeconds },
  { key: "avgParticipants", label: "Average participants", format: formatDecimal },
  { key: "recordingShare", label: "Recorded", format: formatPercent, points: true },
  { key: "unansweredRate", label: "Unanswered", format: formatPercent, points: true, higherIsBetter: false },
];

export function kpiTiles(report: TotalsReport): KpiTile[] {
  return TILE_SPECS.map((s) => {
    const cur = report.current[s.key];
    const prev = report.previous ? report.previous[s.key] : null;
    return {
      key: s.key,
      label: s.label,
      value: s.format(cur),
      previous: prev === null ? null : s.format(prev),
      change: s.points ? changePoints(cur, prev) : change(cur, prev),
      higherIsBetter: s.higherIsBetter ?? true,
    };
  });
}

export interface DailyPoint {
  date: string;
  calls: number;
  audioMinutes: number;
  videoMinutes: number;
  /** The compared period's day at the same position (its first day beside this one's first day). */
  previousDate?: string;
  previousCalls?: number;
  previousMinutes?: number;
}

/**
 * Calls and minutes per day; minutes rounded to whole minutes for the axis. With the
 * compared period's days, day i of this period carries day i of that one (both reports
 * list every day of their range, so positions line up; a shorter previous month just
 * ends earlier).
 */
export function dailySeries(rows: readonly DailyUsageRow[], previous?: readonly DailyUsageRow[]): DailyPoint[] {
  return rows.map((r, i) => {
    const point: DailyPoint = { date: r.date, calls: r.calls, audioMinutes: Math.round(r.audioMinutes), videoMinutes: Math.round(r.videoMinutes) };
    const p = previous?.[i];
    if (p) Object.assign(point, { previousDate: p.date, previousCalls: p.calls, previousMinutes: Math.round(p.audioMinutes + p.videoMinutes) });
    return point;
  });
}

export interface BreakdownGroup {
  dimension: BreakdownRow["dimension"];
  title: string;
  total: number;
  items: Array<{ value: string; label: string; calls: number; share: number; minutes: number }>;
}

const BREAKDOWN_ORDER: Array<BreakdownRow["dimension"]> = ["type", "mode", "status", "receiverType", "hasRecording"];

/** One group per dimension, values in the API's order; an `other` value only when it holds calls. */
export function breakdownGroups(rows: readonly BreakdownRow[], dimensions = BREAKDOWN_ORDER): BreakdownGroup[] {
  return dimensions.map((dimension) => {
    const mine = rows.filter((r) => r.dimension === dimension && !(r.value === "other" && r.calls === 0));
    const total = mine.reduce((s, r) => s + r.calls, 0);
    return {
      dimension,
      title: label(dimension),
      total,
      items: mine.map((r) => ({ value: r.value, label: label(r.value), calls: r.calls, share: total ? r.calls / total : 0, minutes: r.totalMinutes })),
    };
  });
}

export interface HeatmapRow {
  weekday: number;
  name: string;
  cells: Array<{ hour: number; average: number; calls: number; intensity: number }>;
}

/** 7 × 24 rows, Monday first; intensity 0..1 of each cell's average against the busiest. */
export function heatmapGrid(cells: readonly HeatmapCell[]): { rows: HeatmapRow[]; max: number } {
  const max = cells.reduce((m, c) => Math.max(m, c.average), 0);
  const order = [1, 2, 3, 4, 5, 6, 0];
  const rows = order.map((weekday) => {
    const mine = cells.filter((c) => c.weekday === weekday).sort((a, b) => a.hour - b.hour);
    return {
      weekday,
      name: mine[0]?.weekdayName ?? String(weekday),
      cells: Array.from({ length: 24 }, (_, hour) => {
        const c = mine.find((x) => x.hour === hour);
        const average = c?.average ?? 0;
        return { hour, average, calls: c?.calls ?? 0, intensity: max > 0 ? average / max : 0 };
      }),
    };
  });
  return { rows, max };
}

export interface BarPoint {
  /** The bucket in words (tooltip, table). */
  label: string;
  /** The bucket on the axis, its unit left to the axis title: "5–15", "101+". */
  tick: string;
  value: number;
  share: number;
}

/** Calls per duration bucket; ticks in minutes ("<1", "1–5", "≥60"). */
export function durationSeries(rows: readonly DurationBucketRow[]): BarPoint[] {
  const total = rows.reduce((s, r) => s + r.calls, 0);
  return rows.map((r) => ({ label: r.label, tick: r.label.replace(/\s*min$/, ""), value: r.calls, share: total ? r.calls / total : 0 }));
}

/** Participants per number-of-calls bucket; ticks in calls ("1", "2–5", "101+"). */
export function engagementSeries(rows: readonly EngagementBucketRow[]): BarPoint[] {
  const total = rows.reduce((s, r) => s + r.participants, 0);
  return rows.map((r) => {
    const tick = r.maxCalls === null ? `${r.minCalls}+` : r.minCalls === r.maxCalls ? String(r.minCalls) : `${r.minCalls}–${r.maxCalls}`;
    return { label: `${tick} ${r.maxCalls === 1 ? "call" : "calls"}`, tick, value: r.participants, share: total ? r.participants / total : 0 };
  });
}

export interface TimelineSegment {
  /** Seconds from the timeline's start. */
  joinOffset: number;
  leaveOffset: number;
  joinedAt: number;
  /** Null while the session is still open (it runs to the timeline's end). */
  leftAt: number | null;
}

/** One person: every session of theirs on one row (a rejoin is a second segment). */
export interface TimelineRow {
  uid: string;
  joined: boolean;
  segments: TimelineSegment[];
  /** The sessions' states, for a person who never joined. */
  state: string | null;
}

export interface Timeline {
  start: number;
  end: number;
  rows: TimelineRow[];
}

/**
 * Joins and leaves on one time axis: from the call's start (or the first join) to its
 * end (or the last leave), one row per person. A session still open (no leftAt) runs to the end.
 */
export function callTimeline(
  call: Pick<CallDetail, "startedAt" | "initiatedAt" | "endedAt" | "participants"> & { durationSeconds?: number },
): Timeline | null {
  const joins = call.participants.flatMap((p) => (p.joinedAt !== null ? [p.joinedAt] : []));
  const leaves = call.participants.flatMap((p) => (p.leftAt !== null ? [p.leftAt] : []));
  const starts = [call.startedAt ?? call.initiatedAt, ...joins].filter((t): t is number => t !== null);
  if (starts.length === 0) return null;
  const start = Math.min(...starts);
  // An ongoing call has no end and no leaves yet: its extent so far is what the platform
  // counted (the call's duration, each participant's minutes since joining).
  const soFar = [
    call.startedAt !== null && call.durationSeconds ? call.startedAt + call.durationSeconds : null,
    ...call.participants.map((p) => (p.joinedAt !== null && p.leftAt === null ? p.joinedAt + Math.round(p.totalDurationMinutes * 60) : null)),
  ];
  const end = Math.max(start + 1, ...[call.endedAt, ...leaves, ...joins, ...soFar].filter((t): t is number => t !== null));
  return {
    start,
    end,
    rows: groupByPerson(call.participants).map((person) => ({
      uid: person.uid,
      joined: person.joinedAt !== null,
      segments: person.sessions
        .filter((p) => p.joinedAt !== null)
        .map((p) => ({ joinOffset: p.joinedAt! - start, leaveOffset: (p.leftAt ?? end) - start, joinedAt: p.joinedAt!, leftAt: p.leftAt }))
        .sort((x, y) => x.joinOffset - y.joinOffset),
      state: person.states.join(", ") || null,
    })),
  };
}

/** Round steps of a call timeline's axis, in seconds. */
const TICK_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400];

/**
 * Ticks of a timeline `span` seconds long: round offsets (every 5 min, 15 min, 1 h…), at
 * most five, none so close to the end that its label would not fit; of more than three,
 * every other one is `minor` (left out on a phone).
 */
export function timelineTicks(span: number): Array<{ offset: number; label: string; minor: boolean }> {
  // An infinite span would loop forever (Infinity + step is Infinity), a broken one means nothing to mark.
  if (!Number.isFinite(span) || span <= 0) return [];
  const step = TICK_STEPS.find((s) => span / s <= 5) ?? Math.ceil(span / 5);
  const offsets: number[] = [];
  for (let t = step; t <= span * 0.92; t += step) offsets.push(t);
  // A phone has room for three labels beside the start time.
  return offsets.map((t, i) => ({ offset: t, label: `+${shortDuration(t)}`, minor: offsets.length > 3 && i % 2 === 0 }));
}

/** 45 → "45s", 300 → "5m", 5400 → "1h 30m". */
function shortDuration(seconds: number): string {
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return seconds % 60 ? `${Math.floor(seconds / 60)}m ${seconds % 60}s` : `${seconds / 60}m`;
  const h = Math.floor(seconds / 3600);
  const m = Math.round((seconds % 3600) / 60);
  return m ? `${h}h ${m}m` : `${h}h`;
}

/** Minutes per person of a call (their sessions summed), most first. */
export function participantMinutes(call: Pick<CallDetail, "participants">): Array<{ uid: string; audio: number; video: number; total: number }> {
  return groupByPerson(call.participants)
    .map((p) => ({ uid: p.uid, audio: p.audioMinutes, video: p.videoMinutes, total: p.totalMinutes }))
    .sort((a, b) => b.total - a.total || a.uid.localeCompare(b.uid));
}

/** Per-app daily rows merged into one series: `{date, [appId]: calls}`. */
export function appTrend(perApp: ReadonlyArray<{ app: string; rows: readonly DailyUsageRow[] }>, metric: "calls" | "minutes" = "calls"): Array<Record<string, number | string>> {
  const byDate = new Map<string, Record<string, number | string>>();
  for (const { app, rows } of perApp) {
    for (const r of rows) {
      const point = byDate.get(r.date) ?? { date: r.date };
      point[app] = metric === "calls" ? r.calls : Math.round(r.audioMinutes + r.videoMinutes);
      byDate.set(r.date, point);
    }
  }
  const apps = perApp.map((p) => p.app);
  return [...byDate.values()]
    .sort((a, b) => String(a.date).localeCompare(String(b.date)))
    .map((p) => {
      for (const a of apps) p[a] ??= 0;
      return p;
    });
}
