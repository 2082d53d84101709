import type { CsvColumn } from "@/lib/export/csv";
import { isoFormatter } from "@/lib/export/iso";
import type { EventCount, RecentDelivery } from "@/lib/ingest/queries";

/** Flat rows of the events tables: the same in the page, the JSON and the CSV. */
export interface DeliveryRow {
  kind: "accepted" | "rejected";
  id: number;
  app: string;
  trigger: string;
  /** ISO 8601 in the chosen zone, to the second. */
  receivedAt: string;
  /** Epoch milliseconds (for scripts). */
  receivedMs: number;
  /** applied / stored / failed, or the HTTP status of a rejection. */
  outcome: string;
  code: string;
  reason: string;
  sessionId: string;
  repeats: number;
}

export function deliveryRow(d: RecentDelivery, tz = "UTC"): DeliveryRow {
  const receivedAt = isoFormatter(tz)(d.receivedMs / 1000);
  const receivedMs = d.receivedMs;
  if (d.kind === "accepted") {
    return { kind: d.kind, id: d.id, app: d.appId, trigger: d.trigger, receivedAt, receivedMs, outcome: d.outcome, code: "", reason: "", sessionId: d.sessionId ?? "", repeats: d.repeatCount };
  }
  return { kind: d.kind, id: d.id, app: d.appId, trigger: d.trigger ?? "", receivedAt, receivedMs, outcome: String(d.status), code: d.code, reason: d.reason, sessionId: "", repeats: 0 };
}

export const DELIVERY_COLUMNS: CsvColumn<DeliveryRow>[] = [
  { key: "kind" }, { key: "id" }, { key: "app" }, { key: "trigger" }, { key: "receivedAt" }, { key: "outcome" },
  { key: "code" }, { key: "reason" }, { key: "sessionId" }, { key: "repeats" }, { key: "receivedMs" },
];

export interface CountRow {
  day: string;
  app: string;
  trigger: string;
  category: string;
  count: number;
}

export const countRow = (c: EventCount): CountRow => ({ day: c.day, app: c.appId, trigger: c.trigger, category: c.category, count: c.count });

/** Newest day first, then app, then the busiest trigger. */
export function sortCountRows(rows: CountRow[]): CountRow[] {
  return rows.sort((a, b) => b.day.localeCompare(a.day) || a.app.localeCompare(b.app) || b.count - a.count || a.trigger.localeCompare(b.trigger));
}

export const COUNT_COLUMNS: CsvColumn<CountRow>[] = [{ key: "day" }, { key: "app" }, { key: "trigger" }, { key: "category" }, { key: "count" }];

export const CATEGORIES = ["chat", "call", "meeting", "recording", "unknown"] as const;
export type ChartPoint = { day: string } & Record<(typeof CATEGORIES)[number], number>;

/** One point per day of the range (zeros included), events summed by category. Pure, for the chart. */
export function toDailyChart(rows: readonly CountRow[], dayList: readonly string[]): ChartPoint[] {
  const byDay = new Map<string, ChartPoint>(dayList.map((day) => [day, { day, chat: 0, call: 0, meeting: 0, recording: 0, unknown: 0 }]));
  for (const r of rows) {
    const p = byDay.get(r.day);
    if (!p) continue;
    const cat = (CATEGORIES as readonly string[]).includes(r.category) ? (r.category as (typeof CATEGORIES)[number]) : "unknown";
    p[cat] += r.count;
  }
  return [...byDay.values()];
}
