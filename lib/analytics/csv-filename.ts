import type { Filters } from "./filters";
import { isoFormatter } from "@/lib/export/iso";

/**
 * A CSV download's file name that says what it holds, so two downloads never share one:
 * `callboard-<report>[_<apps>][_<filters>]_<range>[_<zone>].csv`, e.g.
 * `callboard-calls_acme-sales_video_2026-01-01_to_2026-01-31.csv`. The range's days are
 * in the filters' zone (`to` is exclusive: its last day is the one before it); an open
 * range ends "as of" today.
 */
const clean = (s: string, max = 40) => s.replace(/[^A-Za-z0-9.]+/g, "-").replace(/^-+|-+$/g, "").slice(0, max) || "x";

export function csvDownloadName(report: string, f: Partial<Filters>, now = new Date(), { range = true }: { range?: boolean } = {}): string {
  const tz = f.tz ?? "UTC";
  const day = (t: number) => isoFormatter(tz)(t).slice(0, 10);
  const today = day(Math.floor(now.getTime() / 1000));
  const parts = [`callboard-${clean(report)}`];
  const apps = [...(f.apps ?? [])].sort();
  if (apps.length > 0) parts.push(apps.length <= 3 ? apps.map((a) => clean(a)).join("+") : `${apps.length}-apps`);
  for (const v of [f.type, f.mode, f.status, f.receiverType]) if (v) parts.push(clean(v));
  if (f.hasRecording !== undefined) parts.push(f.hasRecording ? "recorded" : "not-recorded");
  if (f.uid !== undefined) parts.push(`uid-${clean(f.uid)}`);
  if (f.participantsCount !== undefined) parts.push(`${f.participantsCount}-participants`);
  // The heatmap drill-down (running-hours.ts): "running-mon-10h", "running-mon", "running-10h".
  if (f.weekday !== undefined || f.hour !== undefined) {
    const weekday = f.weekday === undefined ? [] : [["sun", "mon", "tue", "wed", "thu", "fri", "sat"][f.weekday]];
    parts.push(["running", ...weekday, ...(f.hour === undefined ? [] : [`${String(f.hour).padStart(2, "0")}h`])].join("-"));
  }
  // Only the participants reports read the search (lib/analytics/filters.ts `person`).
  if (f.person !== undefined && report.startsWith("participants")) parts.push(`person-${clean(f.person)}`);
  // `range: false`: the report names its own period (a statement's month) or has none (the newest deliveries).
  if (!range) parts.push(`as-of_${today}`);
  else if (f.from !== undefined && f.to !== undefined) parts.push(`${day(f.from)}_to_${day(Math.max(f.from, f.to - 1))}`);
  else if (f.from !== undefined) parts.push(`${day(f.from)}_to_${today}`);
  else if (f.to !== undefined) parts.push(`up-to_${day(f.to - 1)}`);
  else parts.push(`all-time_as-of_${today}`);
  if (tz !== "UTC") parts.push(clean(tz));
  return `${parts.join("_").slice(0, 200)}.csv`;
}
