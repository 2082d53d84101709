/**
 * The notification a destination receives (docs/api.md, "Alert notifications"): the
 * rule, the value and threshold, the window, a link to the same numbers on the
 * dashboard, and a one-line `text` that chat incoming-webhooks show as the message.
 */
import type { WindowRange } from "./metrics";
import type { RuleRecord } from "./rules";
import { summarize } from "./rules";
import { describeWindow, formatMetricValue, METRICS, type AlertFilters, type AlertState, type Metric } from "./schema";

/** A query string in the dashboard's filter names (repeatable `app`), without empty values. */
function toQuery(params: Record<string, string | number | readonly string[] | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    for (const x of Array.isArray(v) ? v : [v]) q.append(k, String(x));
  }
  const s = q.toString();
  return s ? `?${s}` : "";
}

/** The dashboard page that shows a metric, with the rule's filters and window in its URL. */
export function dashboardLink(baseUrl: string, metric: Metric, f: AlertFilters, range: WindowRange): string {
  const base = baseUrl.replace(/\/+$/, "");
  const apps = f.app ?? [];
  switch (METRICS[metric].source) {
    case "ingest":
      return `${base}/events${toQuery({ app: apps })}`;
    case "sync":
      return `${base}/sync${toQuery({ app: apps, status: "failed" })}`;
    default: {
      const q = toQuery({
        app: apps, type: f.type, mode: f.mode, status: f.status, receiverType: f.receiverType,
        hasRecording: f.hasRecording === undefined ? undefined : String(f.hasRecording), uid: f.uid, participantsCount: f.participantsCount,
        from: range.from, to: range.to,
      });
      return `${base}${metric === "recordings" ? "/recordings" : metric === "calls" ? "/calls" : "/"}${q}`;
    }
  }
}

export interface Notification {
  type: "alert.firing" | "alert.resolved";
  /** The event id: also the `webhook-id` header, the same on every retry (dedupe on it). */
  id: string;
  timestamp: string;
  text: string;
  state: AlertState;
  previousState: AlertState;
  rule: { id: number; name: string; metric: Metric; summary: string; filters: AlertFilters; windowSeconds: number; condition: RuleRecord["condition"]; minCalls: number };
  value: number;
  unit: string;
  /** The condition's number: the value for above/below, the percentage for change. */
  threshold: number;
  /** change rules: the previous window's value and the change in percent (null from 0). */
  previousValue: number | null;
  changePercent: number | null;
  calls: number;
  window: { from: number; to: number; seconds: number; fromIso: string; toIso: string };
  link: string;
}

const iso = (s: number) => new Date(s * 1000).toISOString();
const short = (s: number) => iso(s).slice(0, 16).replace("T", " ");

function filterText(f: AlertFilters): string {
  const parts = Object.entries(f)
    .filter(([, v]) => v !== undefined && !(Array.isArray(v) && v.length === 0))
    .map(([k, v]) => `${k === "app" ? "apps" : k} ${Array.isArray(v) ? v.join(", ") : String(v)}`);
  return parts.length ? parts.join("; ") : "all apps";
}

export interface NotificationInput {
  eventId: string;
  rule: RuleRecord;
  from: AlertState;
  to: AlertState;
  range: WindowRange;
  value: number;
  previousValue: number | null;
  changePercent: number | null;
  threshold: number;
  calls: number;
  atMs: number;
  baseUrl: string;
}

export function buildNotification(n: NotificationInput): Notification {
  const { rule, range } = n;
  const link = dashboardLink(n.baseUrl, rule.metric, rule.filters, range);
  const head = n.to === "firing" ? "FIRING" : "RESOLVED";
  const change = n.changePercent === null ? "" : ` (${n.changePercent >= 0 ? "+" : ""}${n.changePercent.toFixed(1)}% against ${formatMetricValue(rule.metric, n.previousValue ?? 0)})`;
  const fromZero = rule.condition.op === "change" && n.changePercent === null && n.previousValue === 0 ? " (from 0 in the previous window)" : "";
  const text =
    `[Callboard] ${head}: ${rule.name}. ${METRICS[rule.metric].label} was ${formatMetricValue(rule.metric, n.value)}${change}${fromZero}` +
    ` over ${describeWindow(rule.windowSeconds)} (${short(range.from)}–${short(range.to).slice(11)} UTC; ${filterText(rule.filters)}).` +
    ` Rule: ${summarize(rule)}. ${link}`;
  return {
    type: n.to === "firing" ? "alert.firing" : "alert.resolved",
    id: n.eventId,
    timestamp: new Date(n.atMs).toISOString(),
    text,
    state: n.to,
    previousState: n.from,
    rule: { id: rule.id, name: rule.name, metric: rule.metric, summary: summarize(rule), filters: rule.filters, windowSeconds: rule.windowSeconds, condition: rule.condition, minCalls: rule.minCalls },
    value: n.value,
    unit: METRICS[rule.metric].unit,
    threshold: n.threshold,
    previousValue: n.previousValue,
    changePercent: n.changePercent,
    calls: n.calls,
    window: { from: range.from, to: range.to, seconds: rule.windowSeconds, fromIso: iso(range.from), toIso: iso(range.to) },
    link,
  };
}
