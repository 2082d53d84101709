"use client";

import Link from "next/link";
import { useQueries } from "@tanstack/react-query";
import { useState } from "react";
import { TrendChart } from "@/components/charts/trend-chart";
import { ClientsPanel } from "./clients-panel";
import { ComparePanel } from "./compare-panel";
import { FilterBar, type AppOption } from "@/components/filter-bar";
import { CsvLink, EmptyState, ErrorState, Panel, Skeleton } from "@/components/panel";
import { QueryState } from "@/components/query-state";
import { ScrollBox } from "@/components/scroll-box";
import { reportQuery, useFilters, useReport } from "@/components/use-report";
import { appTrend } from "@/lib/ui/charts";
import { apiQuery } from "@/lib/ui/filter-params";
import { formatCount, formatMinutes, formatPercent } from "@/lib/ui/format";
import { trendApps } from "@/lib/ui/pages";
import { csvUrl } from "@/lib/ui/reports";
import { UNITS_HINT } from "@/lib/ui/units";

export function AppsView({ apps }: { apps: AppOption[] }) {
  const [values] = useFilters();
  const [metric, setMetric] = useState<"calls" | "minutes">("calls");
  const query = apiQuery(values);
  const usage = useReport("apps", query);
  const shown = trendApps(values.app, apps);
  const names = new Map(apps.map((a) => [a.appId, a.name || a.appId]));
  const nameOf = (app: string) => names.get(app) ?? app;
  const perApp = useQueries({
    queries: shown.map((app) => {
      const q = apiQuery({ ...values, app: [app] });
      return reportQuery("daily", q);
    }),
  });
  const failed = perApp.find((q) => q.isError);
  const ready = perApp.every((q) => q.data !== undefined);

  return (
    <>
      <FilterBar apps={apps} />
      <Panel id="compare" title="Side by side" actions={<CsvLink href={csvUrl("apps", query)} what="tenant apps side by side" />}>
        <p className="muted hint">{UNITS_HINT}</p>
        <QueryState query={usage} height={140}>
          {(d) =>
            d.data.length === 0 ? (
              <EmptyState>No tenant app to compare.</EmptyState>
            ) : (
              <ScrollBox label="Tenant apps side by side">
                <table className="data-table wrap-heads" data-testid="apps-table">
                  <thead>
                    <tr>
                      <th scope="col">App</th>
                      <th scope="col" className="num">Calls</th>
                      <th scope="col" className="num">Audio minutes</th>
                      <th scope="col" className="num">Video minutes</th>
                      <th scope="col" className="num">Participant minutes</th>
                      <th scope="col" className="num">Participant minutes per call</th>
                      <th scope="col" className="num" title="Calls flagged by the platform or with a link received">Recorded</th>
                      <th scope="col" className="num">Participants</th>
                    </tr>
                  </thead>
                  <tbody>
                    {d.data.map((a) => (
                      <tr key={a.app} data-app={a.app}>
                        <td>
                          <Link href={`/calls?${apiQuery({ ...values, app: [a.app] }).toString()}`}>{a.name}</Link> <span className="muted">({a.app})</span>
                        </td>
                        <td className="num" data-testid="calls">{formatCount(a.calls)}</td>
                        <td className="num">{formatMinutes(a.audioMinutes)}</td>
                        <td className="num">{formatMinutes(a.videoMinutes)}</td>
                        <td className="num">{formatMinutes(a.totalMinutes)}</td>
                        <td className="num">{a.calls ? formatMinutes(a.totalMinutes / a.calls) : "—"}</td>
                        <td className="num">
                          {formatCount(a.recordings)} <span className="muted">{a.calls ? formatPercent(a.recordings / a.calls) : ""}</span>
                        </td>
                        <td className="num">{formatCount(a.participants)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </ScrollBox>
            )
          }
        </QueryState>
      </Panel>
      <ComparePanel apps={apps} values={values} shown={shown} />
      <ClientsPanel apps={apps} query={query} />
      <Panel
        id="trend"
        title="Trend per app"
        actions={
          <>
            <label className="inline-field">
              Show{" "}
              <select value={metric} onChange={(e) => setMetric(e.target.value === "minutes" ? "minutes" : "calls")}>
                <option value="calls">Calls per day</option>
                <option value="minutes">Participant minutes per day</option>
              </select>
            </label>
            <span className="csv-links" data-testid="trend-csv">
              CSV per app:{" "}
              {shown.map((app) => (
                <CsvLink key={app} href={csvUrl("daily", apiQuery({ ...values, app: [app] }))} what={`daily usage of ${nameOf(app)}`}>
                  {nameOf(app)}
                </CsvLink>
              ))}
            </span>
          </>
        }
      >
        {failed?.error ? (
          <ErrorState message={failed.error.message} onRetry={() => perApp.forEach((q) => void q.refetch())} />
        ) : !ready ? (
          <Skeleton height={260} />
        ) : (
          <TrendChart
            points={appTrend(shown.map((app, i) => ({ app, rows: perApp[i].data?.data ?? [] })), metric)}
            series={shown.map((app) => ({ key: app, name: nameOf(app) }))}
            unit={metric === "calls" ? "Calls" : "Minutes"}
          />
        )}
      </Panel>
    </>
  );
}
