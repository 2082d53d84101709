/**
 * A month's statements as one flat CSV (lib/export: RFC 4180, formula-safe): per app its
 * priced lines, its total, its pending adjustment if any, and with `detail` one row per
 * participant uid. Amounts and minutes are exact decimal text.
 */
import type { CsvColumn } from "@/lib/export/csv";
import { ROUNDING_RULE } from "./money";
import type { Statement } from "./statements";

export interface StatementCsvRow {
  app: string;
  app_name: string;
  month: string;
  time_zone: string;
  status: Statement["status"];
  number: string;
  /** audio, video, recordings, minimum, adjustment, total, pending_adjustment, participant. */
  line: string;
  description: string;
  uid: string;
  calls: string;
  audio_minutes: string;
  video_minutes: string;
  quantity: string;
  included: string;
  billable: string;
  unit_price: string;
  amount: string;
  currency: string;
}

export const STATEMENT_CSV_COLUMNS: ReadonlyArray<CsvColumn<StatementCsvRow>> = [
  { key: "app" }, { key: "app_name" }, { key: "month" }, { key: "time_zone" }, { key: "status" }, { key: "number" }, { key: "line" },
  { key: "description" }, { key: "uid" }, { key: "calls", exact: true }, { key: "audio_minutes", exact: true },
  { key: "video_minutes", exact: true }, { key: "quantity", exact: true }, { key: "included", exact: true },
  { key: "billable", exact: true }, { key: "unit_price", exact: true }, { key: "amount", exact: true }, { key: "currency" },
];

export function* statementCsvRows(statements: readonly Statement[]): Generator<StatementCsvRow> {
  for (const s of statements) {
    const base = {
      app: s.app, app_name: s.name, month: s.month, time_zone: s.timeZone, status: s.status, number: s.issued?.number ?? "", uid: "", calls: "", audio_minutes: "",
      video_minutes: "", quantity: "", included: "", billable: "", unit_price: "", amount: "", currency: s.currency ?? "",
    };
    const usage = { calls: String(s.usage.calls), audio_minutes: s.usage.audioMinutes, video_minutes: s.usage.videoMinutes };
    for (const l of s.lines) {
      yield { ...base, line: l.kind, description: l.label, quantity: l.quantity, included: l.included, billable: l.billable, unit_price: l.unitPrice, amount: l.amount };
    }
    // The month's usage with the total (or alone: no price sheet in force).
    if (s.total !== null) yield { ...base, ...usage, line: "total", description: ROUNDING_RULE, amount: s.total };
    else yield { ...base, ...usage, line: "usage", description: "No price sheet in force: usage only" };
    const p = s.pendingAdjustment;
    if (p) yield { ...base, line: "pending_adjustment", description: `Usage changed after issue; a later statement can carry this`, amount: p.amount };
    for (const u of s.participants ?? []) {
      yield { ...base, line: "participant", description: "", uid: u.uid, calls: String(u.calls), audio_minutes: u.audioMinutes, video_minutes: u.videoMinutes };
    }
  }
}
