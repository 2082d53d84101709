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
  appName: string;
  month: string;
  timeZone: string;
  status: Statement["status"];
  number: string;
  /** audio, video, recordings, minimum, adjustment, total, pending_adjustment, participant. */
  line: string;
  description: string;
  uid: string;
  calls: string;
  audioMinutes: string;
  videoMinutes: string;
  quantity: string;
  included: string;
  billable: string;
  unitPrice: string;
  amount: string;
  currency: string;
}

export const STATEMENT_CSV_COLUMNS: ReadonlyArray<CsvColumn<StatementCsvRow>> = [
  { key: "app" }, { key: "appName" }, { key: "month" }, { key: "timeZone" }, { key: "status" }, { key: "number" }, { key: "line" },
  { key: "description" }, { key: "uid" }, { key: "calls", exact: true }, { key: "audioMinutes", exact: true },
  { key: "videoMinutes", exact: true }, { key: "quantity", exact: true }, { key: "included", exact: true },
  { key: "billable", exact: true }, { key: "unitPrice", exact: true }, { key: "amount", exact: true }, { key: "currency" },
];

export function* statementCsvRows(statements: readonly Statement[]): Generator<StatementCsvRow> {
  for (const s of statements) {
    const base = {
      app: s.app, appName: s.name, month: s.month, timeZone: s.timeZone, status: s.status, number: s.issued?.number ?? "", uid: "", calls: "", audioMinutes: "",
      videoMinutes: "", quantity: "", included: "", billable: "", unitPrice: "", amount: "", currency: s.currency ?? "",
    };
    const usage = { calls: String(s.usage.calls), audioMinutes: s.usage.audioMinutes, videoMinutes: s.usage.videoMinutes };
    for (const l of s.lines) {
      yield { ...base, line: l.kind, description: l.label, quantity: l.quantity, included: l.included, billable: l.billable, unitPrice: l.unitPrice, amount: l.amount };
    }
    // The month's usage with the total (or alone: no price sheet in force).
    if (s.total !== null) yield { ...base, ...usage, line: "total", description: ROUNDING_RULE, amount: s.total };
    else yield { ...base, ...usage, line: "usage", description: "No price sheet in force: usage only" };
    const p = s.pendingAdjustment;
    if (p) yield { ...base, line: "pending_adjustment", description: `Usage changed after issue; a later statement can carry this`, amount: p.amount };
    for (const u of s.participants ?? []) {
      yield { ...base, line: "participant", description: "", uid: u.uid, calls: String(u.calls), audioMinutes: u.audioMinutes, videoMinutes: u.videoMinutes };
    }
  }
}
