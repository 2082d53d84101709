/**
 * Tenant apps compared fully: per app, the rates and averages of its totals and the
 * change against the previous period, from each app's own totals and status breakdown
 * (the same reports the overview uses, one app at a time). Pure: no fetching here.
 */
import type { BreakdownRow, TotalsReport } from "@/lib/analytics/report-types";
import { change, changePoints, type Change } from "./format";

export interface AppComparison {
  app: string;
  name: string;
  calls: number;
  callsChange: Change;
  /** Share (0..1) of calls nobody answered. */
  unansweredRate: number;
  unansweredChange: Change;
  /** Share (0..1) of calls the receiver rejected. */
  rejectedRate: number;
  avgDurationSeconds: number;
  avgDurationChange: Change;
  avgParticipants: number;
  avgParticipantsChange: Change;
  totalMinutes: number;
  minutesChange: Change;
}

export function compareApp(app: { appId: string; name: string }, totals: TotalsReport, breakdowns: readonly BreakdownRow[]): AppComparison {
  const c = totals.current;
  const p = totals.previous;
  const rejected = breakdowns.find((b) => b.dimension === "status" && b.value === "rejected")?.calls ?? 0;
  return {
    app: app.appId,
    name: app.name || app.appId,
    calls: c.calls,
    callsChange: change(c.calls, p?.calls),
    unansweredRate: c.unansweredRate,
    unansweredChange: changePoints(c.unansweredRate, p?.unansweredRate),
    rejectedRate: c.calls > 0 ? rejected / c.calls : 0,
    avgDurationSeconds: c.avgDurationSeconds,
    avgDurationChange: change(c.avgDurationSeconds, p?.avgDurationSeconds),
    avgParticipants: c.avgParticipants,
    avgParticipantsChange: change(c.avgParticipants, p?.avgParticipants),
    totalMinutes: c.totalMinutes,
    minutesChange: change(c.totalMinutes, p?.totalMinutes),
  };
}
