/**
 * Numbers, minutes, dates and changes as people read them. Pure; locale fixed to
 * English so the server's first paint and the client's hydration agree.
 */
import { EMPTY } from "@/lib/platform/labels";

const LOCALE = "en";
const integer = new Intl.NumberFormat(LOCALE, { maximumFractionDigits: 0 });
const decimal1 = new Intl.NumberFormat(LOCALE, { maximumFractionDigits: 1 });
const compact = new Intl.NumberFormat(LOCALE, { notation: "compact", maximumFractionDigits: 1 });
const percent1 = new Intl.NumberFormat(LOCALE, { style: "percent", maximumFractionDigits: 1 });

export { EMPTY };

export function formatCount(n: number | null | undefined): string {
  return n === null || n === undefined || !Number.isFinite(n) ? EMPTY : integer.format(n);
}

/** Axis ticks: 1.2K, 3.4M. */
export function formatCompact(n: number): string {
  return Number.isFinite(n) ? compact.format(n) : EMPTY;
}

export function formatDecimal(n: number | null | undefined): string {
  return n === null || n === undefined || !Number.isFinite(n) ? EMPTY : decimal1.format(n);
}

/** A share 0..1 as a percentage: 0.1234 → "12.3%". */
export function formatPercent(share: number | null | undefined): string {
  return share === null || share === undefined || !Number.isFinite(share) ? EMPTY : percent1.format(share);
}

/**
 * Participant minutes (summed time, decimal minutes) as hours and minutes, the one way
 * minutes are written everywhere: 0 → "0m", 0.4 → "<1m", 75.5 → "1h 16m", 1500 → "25h 0m",
 * from 1,000 h whole hours. Durations (how long a call lasted) are `formatSeconds`.
 */
export function formatMinutes(minutes: number | null | undefined): string {
  if (minutes === null || minutes === undefined || !Number.isFinite(minutes)) return EMPTY;
  if (minutes === 0) return "0m";
  const sign = minutes < 0 ? "-" : "";
  const abs = Math.abs(minutes);
  if (abs < 0.5) return `${sign}<1m`;
  const whole = Math.round(abs);
  const h = Math.floor(whole / 60);
  const m = whole % 60;
  // One rule at every size (issue 29: "1,575h" beside "379h 56m" read as two units).
  return h === 0 ? `${sign}${m}m` : `${sign}${integer.format(h)}h ${m}m`;
}

/** Seconds as "1h 02m 03s" / "4m 05s" / "12s". */
export function formatSeconds(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return EMPTY;
  const s = Math.round(Math.max(0, seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = s % 60;
  const pad = (n: number) => String(n).padStart(2, "0");
  if (h > 0) return `${h}h ${pad(m)}m ${pad(r)}s`;
  if (m > 0) return `${m}m ${pad(r)}s`;
  return `${r}s`;
}

const dateTimeFormats = new Map<string, Intl.DateTimeFormat>();
function dtf(tz: string, kind: "datetime" | "datetimeSeconds" | "date" | "time" | "hourMinute", zoneName = false): Intl.DateTimeFormat {
  const key = `${tz}|${kind}|${zoneName}`;
  let f = dateTimeFormats.get(key);
  if (!f) {
    const base: Intl.DateTimeFormatOptions = { timeZone: tz, hourCycle: "h23" };
    const opts: Intl.DateTimeFormatOptions =
      kind === "date"
        ? { ...base, year: "numeric", month: "short", day: "numeric" }
        : kind === "time"
          ? { ...base, hour: "2-digit", minute: "2-digit", second: "2-digit" }
          : kind === "hourMinute"
            ? { ...base, hour: "2-digit", minute: "2-digit" }
          : { ...base, year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", ...(kind === "datetimeSeconds" ? { second: "2-digit" } : {}) };
    f = new Intl.DateTimeFormat(LOCALE, zoneName ? { ...opts, timeZoneName: "short" } : opts);
    dateTimeFormats.set(key, f);
  }
  return f;
}

/** Epoch seconds in `tz`: "Mar 5, 2026, 14:03" (`seconds`: "Mar 5, 2026, 14:03:09"). */
/** `zoneName`: followed by the zone's short name ("… 05:00 GMT+5:30"), where nothing else on the page says which zone it is. */
export function formatDateTime(epochSeconds: number | null | undefined, tz = "UTC", { seconds = false, zoneName = false }: { seconds?: boolean; zoneName?: boolean } = {}): string {
  return epochSeconds === null || epochSeconds === undefined ? EMPTY : dtf(tz, seconds ? "datetimeSeconds" : "datetime", zoneName).format(new Date(epochSeconds * 1000));
}

export function formatTime(epochSeconds: number | null | undefined, tz = "UTC"): string {
  return epochSeconds === null || epochSeconds === undefined ? EMPTY : dtf(tz, "time").format(new Date(epochSeconds * 1000));
}

/**
 * A window [from, to) in `tz`: "Nov 27, 2026, 02:00 – 03:00" within a day, else both ends
 * whole ("Nov 26, 2026, 00:00 – Nov 27, 2026, 00:00": a day's window ends at the next
 * midnight, which is not the same day; issue 29 saw "Nov 27, 2026, 02:00 – 6, 03:00").
 */
export function formatWindow(from: number, to: number, tz = "UTC"): string {
  const sameDay = dtf(tz, "date").format(new Date(from * 1000)) === dtf(tz, "date").format(new Date(to * 1000));
  const end = sameDay ? dtf(tz, "hourMinute").format(new Date(to * 1000)) : formatDateTime(to, tz);
  return `${formatDateTime(from, tz)} – ${end}`;
}

/** A local date "2026-03-05" (as the daily report gives it) as "Mar 5". */
export function formatDay(isoDate: string, withYear = false): string {
  const [y, m, d] = isoDate.split("-").map(Number);
  if (!y || !m || !d) return isoDate;
  const date = new Date(Date.UTC(y, m - 1, d));
  return new Intl.DateTimeFormat(LOCALE, { timeZone: "UTC", month: "short", day: "numeric", ...(withYear ? { year: "numeric" } : {}) }).format(date);
}

export interface Change {
  /** Relative change (0.1 = +10%), or null when there is nothing to compare with. */
  ratio: number | null;
  /** Arrow and percentage, e.g. "▲ 12.3%", "▼ 4%", "no change", "new". */
  label: string;
  direction: "up" | "down" | "flat" | "none";
}

/** The change of a value against the previous period's. */
export function change(current: number, previous: number | null | undefined): Change {
  if (previous === null || previous === undefined || !Number.isFinite(previous)) return { ratio: null, label: EMPTY, direction: "none" };
  if (previous === 0) return current === 0 ? { ratio: 0, label: "no change", direction: "flat" } : { ratio: null, label: "new", direction: "up" };
  const ratio = (current - previous) / Math.abs(previous);
  if (Math.abs(ratio) < 0.0005) return { ratio: 0, label: "no change", direction: "flat" };
  const arrow = ratio > 0 ? "▲" : "▼";
  return { ratio, label: `${arrow} ${percent1.format(Math.abs(ratio))}`, direction: ratio > 0 ? "up" : "down" };
}

/** Share-type KPIs compare in percentage points: 0.25 vs 0.2 → "▲ 5 pt". */
export function changePoints(current: number, previous: number | null | undefined): Change {
  if (previous === null || previous === undefined || !Number.isFinite(previous)) return { ratio: null, label: EMPTY, direction: "none" };
  const diff = (current - previous) * 100;
  if (Math.abs(diff) < 0.05) return { ratio: 0, label: "no change", direction: "flat" };
  return { ratio: diff / 100, label: `${diff > 0 ? "▲" : "▼"} ${decimal1.format(Math.abs(diff))} pt`, direction: diff > 0 ? "up" : "down" };
}

