import { formatDateTime as formatUiDateTime, formatSeconds, formatTime } from "@/lib/ui/format";

export { formatTime };

/** Numbers and times for people, the same on the server and in the browser (UTC unless a tz is given). */

const intFmt = new Intl.NumberFormat("en");
const compactFmt = new Intl.NumberFormat("en", { notation: "compact", maximumFractionDigits: 1 });

export const formatInt = (n: number) => intFmt.format(n);
export const formatCompact = (n: number) => (Math.abs(n) < 10_000 ? intFmt.format(n) : compactFmt.format(n));

/** "850ms", "12.3s", then as every duration of the dashboard: "4m 05s", "1h 02m 03s" (lib/ui/format.ts). */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "—";
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)}s`;
  return formatSeconds(ms / 1000);
}

/** Elapsed time as a clock: "4:05", "1:02:03". */
export function formatClock(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${sec}` : `${m}:${sec}`;
}

/** Milliseconds in `tz` (default UTC), written as on the analytics pages (lib/ui/format.ts): "Mar 1, 2026, 14:05". */
export function formatDateTime(ms: number | null | undefined, options: { tz?: string; seconds?: boolean } = {}): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "—";
  return formatUiDateTime(Math.floor(ms / 1000), options.tz ?? "UTC", { seconds: options.seconds ?? false });
}

/** "just now", "45 s ago", "5 min ago", "3 h ago", "2 d ago". */
export function formatAgo(ms: number, nowMs: number): string {
  const s = Math.round((nowMs - ms) / 1000);
  if (s < 5) return "just now";
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86_400)} d ago`;
}

/** Milliseconds since the epoch, taken outside render (server pages hand it to their client part). */
export const nowMs = (): number => Date.now();
