"use client";

import { useQueries } from "@tanstack/react-query";
import type { BreakdownRow, TotalsReport } from "@/lib/analytics";
import type { AppOption } from "@/components/filter-bar";
import { CsvLink, EmptyState, ErrorState, Panel, Skeleton } from "@/components/panel";
import { ScrollBox } from "@/components/scroll-box";
import { reportQuery } from "@/components/use-report";
import { compareApp, type AppComparison } from "@/lib/ui/apps-compare";
import { apiQuery, type FilterValues } from "@/lib/ui/filter-params";
import { formatCount, formatDecimal, formatMinutes, formatPercent, formatSeconds, type Change } from "@/lib/ui/format";
import { csvUrl } from "@/lib/ui/reports";

/** A change against the previous period, coloured by whether it is good news. */
function Delta({ c, higherIsBetter = true }: { c: Change; higherIsBetter?: boolean }) {
  if (c.direction === "none") return null;
  const tone = c.direction === "flat" ? "neutral" : (c.direction === "up") === higherIsBetter ? "good" : "bad";
  return <span className={`kpi-change ${tone}`}> {c.label}</span>;
}

/**
 * Each tenant app's quality and change against the previous period (unanswered and
 * rejected rates, average duration and participants): its own totals and status
 * breakdown, the same reports as the overview, one app at a time.
 */
export function ComparePanel({ apps, values, shown }: { apps: AppOption[]; values: FilterValues; shown: string[] }) {
  const perApp = useQueries({
    queries: shown.flatMap((app) => {
      const q = apiQuery({ ...values, app: [app] });
      return [
        reportQuery("totals", q),
        reportQuery("breakdowns", q),
      ];
    }),
  });
  const failed = perApp.find((q) => q.isError);
  const ready = perApp.every((q) => q.data !== undefined);
  const names = new Map(apps.map((a) => [a.appId, a]));
  const rows: AppComparison[] = ready
    ? shown.map((app, i) => compareApp(names.get(app) ?? { appId: app, name: app }, perApp[2 * i].data as TotalsReport, (perApp[2 * i + 1].data as { data: BreakdownRow[] }).data))
    : [];
  const hasPrevious = ready && shown.length > 0 && (perApp[0].data as TotalsReport).previous !== null;
  return (
    <Panel
      id="quality"
      title="Quality and change per app"
      actions={
        <span className="csv-links">
          CSV per app:{" "}
          {shown.map((app) => (
            <CsvLink key={app} href={csvUrl("totals", apiQuery({ ...values, app: [app] }))} what={`key figures of ${names.get(app)?.name ?? app}`}>
              {names.get(app)?.name || app}
            </CsvLink>
          ))}
        </span>
      }
    >
      <p className="muted hint">
        {hasPrevious ? "Changes compare with the period just before, of the same length." : "Choose a period (From and To) to see each app's change against the period before it."}
      </p>
      {failed?.error ? (
        <ErrorState message={failed.error.message} onRetry={() => perApp.forEach((q) => void q.refetch())} />
      ) : !ready ? (
        <Skeleton height={140} />
      ) : rows.length === 0 ? (
        <EmptyState>No tenant app to compare.</EmptyState>
      ) : (
        <ScrollBox label="Quality and change per app">
          <table className="data-table wrap-heads" data-testid="apps-quality">
            <thead>
              <tr>
                <th scope="col">App</th>
                <th scope="col" className="num">Calls</th>
                <th scope="col" className="num">Unanswered</th>
                <th scope="col" className="num">Rejected</th>
                <th scope="col" className="num">Average call duration</th>
                <th scope="col" className="num">Average participants</th>
                <th scope="col" className="num">Participant minutes</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.app} data-app={r.app}>
                  <td>{r.name}</td>
                  <td className="num" data-testid="q-calls">{formatCount(r.calls)}<Delta c={r.callsChange} /></td>
                  <td className="num" data-testid="q-unanswered">{formatPercent(r.unansweredRate)}<Delta c={r.unansweredChange} higherIsBetter={false} /></td>
                  <td className="num" data-testid="q-rejected">{formatPercent(r.rejectedRate)}</td>
                  <td className="num">{formatSeconds(r.avgDurationSeconds)}<Delta c={r.avgDurationChange} /></td>
                  <td className="num">{formatDecimal(r.avgParticipants)}<Delta c={r.avgParticipantsChange} /></td>
                  <td className="num">{formatMinutes(r.totalMinutes)}<Delta c={r.minutesChange} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      )}
    </Panel>
  );
}
