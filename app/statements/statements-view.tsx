"use client";

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useQueryStates } from "nuqs";
import type { FormEvent } from "react";
import { AppPicker, TimeZoneSelect, type AppOption } from "@/components/filter-bar";
import { CsvLink, EmptyState } from "@/components/panel";
import { QueryState } from "@/components/query-state";
import { fetchJson } from "@/lib/ui/fetch-json";
import type { StatementsJson } from "@/lib/billing/statements";
import { statementParsers, statementsKey, statementsQuery } from "./params";
import { StatementCard, monthLabel } from "./statement-card";

/** Month, apps, zone and detail in the URL; one card per app, each printed on its own page. */
export function StatementsView({ apps, isAdmin, defaultMonth }: { apps: AppOption[]; isAdmin: boolean; defaultMonth: string }) {
  const [values, setValues] = useQueryStates(statementParsers, { history: "push", scroll: false });
  const query = statementsQuery(values, defaultMonth);
  const month = values.month ?? defaultMonth;
  const statements = useQuery({
    queryKey: statementsKey(query),
    queryFn: ({ signal }) => fetchJson<StatementsJson>(`/api/v1/statements?${query.toString()}`, { signal }),
    placeholderData: keepPreviousData,
    staleTime: 30_000,
  });
  const csv = new URLSearchParams(query);
  csv.set("format", "csv");

  return (
    <>
      <form className="filter-bar no-print" aria-label="Statement filters" onSubmit={(e: FormEvent) => e.preventDefault()}>
        <div className="field">
          <label htmlFor="statement-month">Month</label>
          <input
            id="statement-month"
            name="month"
            type="month"
            value={month}
            onChange={(e) => void setValues({ month: e.target.value === "" || e.target.value === defaultMonth ? null : e.target.value })}
          />
        </div>
        <AppPicker apps={apps} selected={values.app} onChange={(app) => void setValues({ app: app.length ? app : null })} />
        <TimeZoneSelect id="statement-tz" value={values.tz} onChange={(tz) => void setValues({ tz: tz === "UTC" ? null : tz })} />
        <label className="inline-field statement-detail">
          <input type="checkbox" checked={values.detail} onChange={(e) => void setValues({ detail: e.target.checked || null })} />
          Detail per participant
        </label>
        <div className="statement-actions">
          <button type="button" className="btn btn-secondary" onClick={() => window.print()}>
            Print / PDF
          </button>
          <CsvLink href={`/api/v1/statements?${csv.toString()}`} what={`statements of ${month}`} />
        </div>
      </form>
      <QueryState query={statements} height={320}>
        {(d) =>
          d.data.length === 0 ? (
            <EmptyState>No tenant app to show a statement for.</EmptyState>
          ) : (
            <>
              <p className="muted no-print" data-testid="statements-period">
                {monthLabel(d.month)} in {d.tz}. {d.rounding}
              </p>
              {d.data.map((s) => (
                <StatementCard key={s.app} statement={s} rounding={d.rounding} isAdmin={isAdmin} onIssued={() => void statements.refetch()} />
              ))}
            </>
          )
        }
      </QueryState>
    </>
  );
}
