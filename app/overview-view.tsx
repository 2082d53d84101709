"use client";

import Link from "next/link";
import { parseAsStringLiteral, useQueryState } from "nuqs";
import { COMPARE_MODES } from "@/lib/analytics/compare-range";
import { BarSeries } from "@/components/charts/bar-series";
import { BreakdownBars } from "@/components/charts/breakdown-bars";
import { DailyCharts } from "@/components/charts/daily-chart";
import { Heatmap } from "@/components/charts/heatmap";
import { FilterBar, type AppOption } from "@/components/filter-bar";
import { KpiTiles } from "@/components/kpi-tiles";
import { CsvLink, EmptyState, Panel } from "@/components/panel";
import { QueryState } from "@/components/query-state";
import { RecordingSummaryLine } from "@/components/recording-facts";
import { ScrollBox } from "@/components/scroll-box";
import { useFilters, useReport } from "@/components/use-report";
import { breakdownGroups, dailySeries, durationSeries, engagementSeries, heatmapGrid, kpiTiles } from "@/lib/ui/charts";
import { endDateInput, fromDateInput, toDateInput } from "@/lib/ui/date-range";
import { apiQuery, pageQuery } from "@/lib/ui/filter-params";
import { formatCount, formatDay, formatMinutes } from "@/lib/ui/format";
import { csvUrl } from "@/lib/ui/reports";
import { UNITS_HINT } from "@/lib/ui/units";

export function OverviewView({ apps }: { apps: AppOption[] }) {
  const [values, setValues] = useFilters();
  // Drill-down: a breakdown value or a day of the chart filters the page to it.
  const pick = (dimension: string, value: string) => void setValues({ [dimension]: value, page: null });
  const pickDay = (date: string) => void setValues({ from: fromDateInput(date, values.tz), to: endDateInput(date, values.tz), page: null });
  const query = apiQuery(values);
  const [compare, setCompare] = useQueryState("compare", parseAsStringLiteral(COMPARE_MODES).withDefault("previous").withOptions({ history: "push", scroll: false }));
  // Only the totals compare; "previous" is the API's default, so the prefetched key stays the same.
  const totals = useReport("totals", compare === "year" ? apiQuery(values, { extra: { compare } }) : query);
  const previousRange = totals.data?.previousRange ?? null;
  const previousDaily = useReport(
    "daily",
    previousRange ? apiQuery({ ...values, from: previousRange.from, to: previousRange.to }) : query,
    previousRange !== null,
  );
  const against = compare === "year" ? "the same period last year" : "the previous period";
  const previousLabel = previousRange ? `${compare === "year" ? "last year" : "previous period"}` : undefined;
  const recordings = useReport("recording-summary", query);
  const daily = useReport("daily", query);
  const breakdowns = useReport("breakdowns", query);
  const durations = useReport("durations", query);
  const heatmap = useReport("heatmap", query);
  const engagement = useReport("engagement", query);
  const appUsage = useReport("apps", query);
  const comparing = values.from !== null && values.to !== null;

  return (
    <>
      <FilterBar apps={apps} />
      <Panel id="kpis" title="Key figures" actions={<><Link href={`/calls?${pageQuery(values).toString()}`}>See these calls</Link><CsvLink href={csvUrl("totals", query)} what="key figures" /></>}>
        <QueryState query={totals} height={96}>
          {(t) => (
            <>
              {comparing ? (
                <div className="compare-choice">
                  <label htmlFor="compare-with">Compare with</label>
                  <select id="compare-with" name="compare" value={compare} onChange={(e) => void setCompare(e.target.value === "year" ? "year" : null)}>
                    <option value="previous">The previous period</option>
                    <option value="year">The same period last year</option>
                  </select>
                  {t.previousRange ? (
                    <span className="muted" data-testid="compared-range">
                      {formatDay(dayOf(t.previousRange.from, values.tz), true)} – {formatDay(dayOf(t.previousRange.to - 1, values.tz), true)}
                    </span>
                  ) : null}
                </div>
              ) : null}
              <KpiTiles tiles={kpiTiles(t)} comparing={comparing} against={against} />
              <p className="muted hint">{UNITS_HINT}{!comparing ? " Choose a period (From and To) to compare with the period before it or with the same period last year." : ""}</p>
            </>
          )}
        </QueryState>
        {recordings.data ? <RecordingSummaryLine summary={recordings.data.data} awaitingHref={`/recordings?${new URLSearchParams([...query, ["view", "awaiting"]]).toString()}`} /> : null}
      </Panel>

      <Panel id="daily" title="Calls and minutes per day" actions={<CsvLink href={csvUrl("daily", query)} what="calls and minutes per day" />}>
        <QueryState query={daily} height={240}>
          {(d) => (d.data.length === 0 ? <EmptyState>No calls match these filters.</EmptyState> : <DailyCharts points={dailySeries(d.data, previousRange ? previousDaily.data?.data : undefined)} previousLabel={previousLabel} onPickDay={pickDay} />)}
        </QueryState>
      </Panel>

      <Panel id="breakdowns" title="Breakdowns" actions={<CsvLink href={csvUrl("breakdowns", query)} what="breakdowns" />}>
        <QueryState query={breakdowns} height={180}>
          {(b) => (
            <div className="breakdown-grid">
              {breakdownGroups(b.data, ["type", "mode", "status", "receiverType"]).map((g) => (
                <BreakdownBars key={g.dimension} group={g} onPick={pick} />
              ))}
            </div>
          )}
        </QueryState>
      </Panel>

      <div className="grid-2">
        <Panel id="durations" title="Call durations" actions={<CsvLink href={csvUrl("durations", query)} what="call durations" />}>
          <QueryState query={durations}>{(d) => <BarSeries points={durationSeries(d.data)} title="Calls by duration" unit="Calls" xTitle="Call duration (minutes)" />}</QueryState>
        </Panel>
        <Panel id="engagement" title="Calls per participant" actions={<CsvLink href={csvUrl("engagement", query)} what="calls per participant" />}>
          <QueryState query={engagement}>
            {(d) => <BarSeries points={engagementSeries(d.data)} title="Participants by number of calls" unit="Participants" xTitle="Calls per participant" color="var(--chart-3)" />}
          </QueryState>
        </Panel>
      </div>

      <Panel id="heatmap" title={`Busy hours (concurrent calls, ${values.tz})`} actions={<CsvLink href={csvUrl("heatmap", query)} what="busy hours" />}>
        <QueryState query={heatmap} height={220}>
          {(d) => {
            const grid = heatmapGrid(d.data);
            // Drill-down: a cell opens the Calls page on the calls running in that weekday and hour of the period.
            const cellHref = (weekday: number, hour: number) => `/calls?${pageQuery({ ...values, weekday, hour }).toString()}`;
            return grid.max === 0 ? <EmptyState>No calls in this period.</EmptyState> : <Heatmap rows={grid.rows} tz={values.tz} cellHref={cellHref} />;
          }}
        </QueryState>
      </Panel>

      <Panel id="apps" title="Tenant apps" actions={<CsvLink href={csvUrl("apps", query)} what="tenant apps" />}>
        <QueryState query={appUsage} height={120}>
          {(d) =>
            d.data.length === 0 ? (
              <EmptyState>No tenant app yet. Add one with the apps command (see the README).</EmptyState>
            ) : (
              <ScrollBox label="Tenant apps">
                <table className="data-table">
                  <thead>
                    <tr>
                      <th scope="col">App</th>
                      <th scope="col" className="num">Calls</th>
                      <th scope="col" className="num hide-phone">Audio minutes</th>
                      <th scope="col" className="num hide-phone">Video minutes</th>
                      <th scope="col" className="num" title="Calls flagged by the platform or with a link received">Recorded</th>
                      <th scope="col" className="num">Participants</th>
                    </tr>
                  </thead>
                  <tbody>
                    {d.data.map((a) => {
                      const drill = pageQuery({ ...values, app: [a.app] });
                      return (
                        <tr key={a.app} data-app={a.app}>
                          <td>
                            <Link href={`/calls?${drill.toString()}`}>{a.name}</Link> <span className="muted hide-phone">({a.app})</span>
                          </td>
                          <td className="num" data-testid="calls">{formatCount(a.calls)}</td>
                          <td className="num hide-phone">{formatMinutes(a.audioMinutes)}</td>
                          <td className="num hide-phone">{formatMinutes(a.videoMinutes)}</td>
                          <td className="num">{formatCount(a.recordings)}</td>
                          <td className="num">{formatCount(a.participants)}</td>
                        </tr>
                      );
                    })}
                  </tbody>
                </table>
              </ScrollBox>
            )
          }
        </QueryState>
      </Panel>
    </>
  );
}

/** The local calendar date (YYYY-MM-DD) of an instant, for formatDay. */
function dayOf(t: number, tz: string): string {
  return toDateInput(t, tz);
}
