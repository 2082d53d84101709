"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Fragment, useState } from "react";
import { fetchJson } from "@/lib/ui/fetch-json";
import { ScrollBox } from "@/components/scroll-box";
import { formatDateTime, formatInt } from "@/app/_ops/format";
import type { AppOption } from "@/lib/ops/scope";
import type { AlertEventView } from "@/lib/alerts/history";
import type { RuleView } from "@/lib/alerts/rules";
import type { UpcomingEvaluation } from "@/lib/alerts/evaluate";
import type { TickResult } from "@/lib/alerts/scheduler";
import { formatMetricValue, type Metric } from "@/lib/alerts/schema";
import { label } from "@/lib/platform/labels";
import { formatWindow } from "@/lib/ui/format";
import { RuleFormView } from "./rule-form";

export interface AlertsAnswer {
  data: RuleView[];
  firing: number;
  history: AlertEventView[];
}

const QUERY_KEY = ["alerts"];
const REFRESH_MS = 30_000;

const formatValue = (metric: Metric, v: number | null) => (v === null ? "—" : formatMetricValue(metric, v));

/** The filter bar's names of the filters label() does not know (it names the call's own fields). */
const FILTER_NAMES: Record<string, string> = { app: "Apps", uid: "Participant uid", participantsCount: "Participants" };

function filtersText(f: RuleView["filters"]): string {
  // Names and values as the filter bar says them ("Mode: Meeting", "Recording: Recorded"), not the API's codes;
  // a uid is a person's id, never a code to translate.
  const parts = Object.entries(f).map(([k, v]) => `${FILTER_NAMES[k] ?? label(k)}: ${Array.isArray(v) ? v.join(", ") : k === "uid" ? String(v) : label(String(v))}`);
  return parts.length ? parts.join("; ") : "every app";
}

/** "Nov 27, 2026, 02:00 – 03:00 UTC", with both dates when the window ends on another day. */
const windowText = (from: number, to: number) => `${formatWindow(from, to)} UTC`;

function StatePill({ state, enabled = true }: { state: RuleView["state"]; enabled?: boolean }) {
  if (!enabled) return <span className="ops-pill alerts-pill-off">off</span>;
  return <span className={`ops-pill alerts-pill-${state}`}>{state}</span>;
}

export function AlertsView({ initial, apps, isAdmin, loadedAtMs }: { initial: AlertsAnswer; apps: AppOption[]; isAdmin: boolean; loadedAtMs: number }) {
  const client = useQueryClient();
  const alerts = useQuery({
    queryKey: QUERY_KEY,
    queryFn: () => fetchJson<AlertsAnswer>("/api/v1/alerts?limit=50"),
    initialData: initial,
    initialDataUpdatedAt: loadedAtMs,
    refetchInterval: REFRESH_MS,
  });
  const refresh = () => void client.invalidateQueries({ queryKey: QUERY_KEY });
  const [editing, setEditing] = useState<number | null>(null);
  const { data: rules, firing, history } = alerts.data;

  return (
    <>
      <div className="ops-head">
        <h1>Alerts</h1>
        <p className="muted">
          Rules over the calls, webhooks and syncs, evaluated once per window. <strong data-testid="firing-count">{formatInt(firing)}</strong> firing.
        </p>
      </div>
      {alerts.isError ? <p className="alert" role="alert">Could not refresh: {alerts.error.message}</p> : null}

      {isAdmin ? <EvaluateNow onDone={refresh} /> : null}

      <section className="card section" aria-labelledby="alert-rules">
        <h2 id="alert-rules">Rules</h2>
        {rules.length === 0 ? (
          <p className="muted" data-testid="rules-empty">{isAdmin ? "No rule yet: create one below." : "No rule watches your apps yet."}</p>
        ) : (
          <ScrollBox labelledBy="alert-rules">
            <table className="ops-table" data-testid="alert-rules">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Rule</th>
                  <th scope="col">Filters</th>
                  <th scope="col">State</th>
                  <th scope="col">Last window (UTC)</th>
                  {isAdmin ? <th scope="col"><span className="sr-only">Actions</span></th> : null}
                </tr>
              </thead>
              <tbody>
                {rules.map((r) => (
                  <Fragment key={r.id}>
                    <tr data-rule-id={r.id} data-state={r.enabled ? r.state : "off"}>
                      <td>{r.name}</td>
                      <td className="wrap">
                        {r.summary}
                        {r.minCalls > 0 ? <span className="muted">, at least {formatInt(r.minCalls)} {r.minCalls === 1 ? "call" : "calls"}</span> : null}
                        <div className="muted">
                          {r.destination ? <>notifies <code title={`${r.destination.origin}/${r.destination.hint}`}>{r.destination.origin}</code></> : r.hasDestination ? "notifies a webhook" : "dashboard only"}
                        </div>
                      </td>
                      <td className="wrap">{filtersText(r.filters)}</td>
                      <td>
                        <StatePill state={r.state} enabled={r.enabled} />{" "}
                        <span className="muted">since {formatDateTime(r.stateSinceMs)}</span>
                      </td>
                      <td className="wrap">
                        {r.lastEvaluation ? (
                          <>
                            {windowText(r.lastEvaluation.windowFrom, r.lastEvaluation.windowTo)}: <strong>{formatValue(r.metric, r.lastEvaluation.value)}</strong>
                            {r.lastEvaluation.calls !== null && r.metric !== "calls" ? <span className="muted"> ({formatInt(r.lastEvaluation.calls)} {r.lastEvaluation.calls === 1 ? "call" : "calls"})</span> : null}
                            {r.lastEvaluation.note ? <div className="ops-danger">{r.lastEvaluation.note}</div> : null}
                          </>
                        ) : (
                          <span className="muted">not evaluated yet</span>
                        )}
                      </td>
                      {isAdmin ? (
                        <td>
                          <RuleActions rule={r} onEdit={() => setEditing(editing === r.id ? null : r.id)} onDone={refresh} />
                        </td>
                      ) : null}
                    </tr>
                    {isAdmin && editing === r.id ? (
                      <tr>
                        <td colSpan={6}>
                          <RuleFormView rule={r} apps={apps} onSaved={refresh} onCancel={() => setEditing(null)} />
                        </td>
                      </tr>
                    ) : null}
                  </Fragment>
                ))}
              </tbody>
            </table>
          </ScrollBox>
        )}
      </section>

      {isAdmin ? (
        <section className="card section" aria-labelledby="new-rule">
          <h2 id="new-rule">New rule</h2>
          <RuleFormView apps={apps} onSaved={refresh} />
        </section>
      ) : null}

      <section className="card section" aria-labelledby="alert-history">
        <h2 id="alert-history">History</h2>
        {history.length === 0 ? (
          <p className="muted" data-testid="history-empty">No rule has changed state yet.</p>
        ) : (
          <ScrollBox labelledBy="alert-history">
            <table className="ops-table" data-testid="alert-history">
              <thead>
                <tr>
                  <th scope="col">When (UTC)</th>
                  <th scope="col">Rule</th>
                  <th scope="col">Change</th>
                  <th scope="col" className="num">Value</th>
                  <th scope="col" className="num">Threshold</th>
                  <th scope="col" className="num">Calls</th>
                  <th scope="col">Window (UTC)</th>
                  {isAdmin ? <th scope="col">Notification</th> : null}
                </tr>
              </thead>
              <tbody>
                {history.map((e) => {
                  const rule = rules.find((r) => r.id === e.ruleId);
                  const metric = rule?.metric ?? "calls";
                  return (
                    <tr key={e.id} data-event-id={e.id} data-rule-id={e.ruleId}>
                      <td>{formatDateTime(e.atMs, { seconds: true })}</td>
                      <td>{e.ruleName}</td>
                      <td><StatePill state={e.fromState} /> → <StatePill state={e.toState} /></td>
                      <td className="num">{formatValue(metric, e.value)}{e.previousValue !== null ? <span className="muted"> (was {formatValue(metric, e.previousValue)})</span> : null}</td>
                      <td className="num">{rule?.condition.op === "change" ? `${e.threshold}%` : formatValue(metric, e.threshold)}</td>
                      <td className="num">{formatInt(e.calls)}</td>
                      <td>{windowText(e.window.from, e.window.to)}</td>
                      {isAdmin ? <td className="wrap"><NotificationCell n={e.notification} /></td> : null}
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </ScrollBox>
        )}
      </section>
    </>
  );
}

function NotificationCell({ n }: { n: AlertEventView["notification"] }) {
  if (!n) return <span className="muted">none</span>;
  const label = n.status === "delivered" ? `delivered${n.attempts > 1 ? ` after ${n.attempts} attempts` : ""}` : n.status === "failed" ? `gave up after ${n.attempts} attempts` : `pending (${n.attempts} attempts)`;
  return (
    <>
      <span className={`ops-pill ${n.status === "delivered" ? "ops-pill-succeeded" : n.status === "failed" ? "ops-pill-failed" : "ops-pill-running"}`}>{label}</span>
      {n.status !== "delivered" && n.lastError ? <div className="muted">{n.lastError}</div> : null}
      {n.nextAttemptMs ? <div className="muted">next try {formatDateTime(n.nextAttemptMs, { seconds: true })}</div> : null}
    </>
  );
}

function RuleActions({ rule, onEdit, onDone }: { rule: RuleView; onEdit: () => void; onDone: () => void }) {
  const change = useMutation({
    mutationFn: (action: "toggle" | "delete") =>
      action === "delete"
        ? fetchJson(`/api/v1/alerts?id=${rule.id}`, { method: "DELETE" })
        : fetchJson(`/api/v1/alerts?id=${rule.id}`, { method: "PATCH", headers: { "content-type": "application/json" }, body: JSON.stringify({ enabled: !rule.enabled }) }),
    onSettled: onDone,
  });
  return (
    <div className="ops-actions">
      <button type="button" className="btn btn-secondary" onClick={onEdit} aria-label={`Edit ${rule.name}`}>Edit</button>
      <button type="button" className="btn btn-secondary" disabled={change.isPending} onClick={() => change.mutate("toggle")} aria-label={`${rule.enabled ? "Disable" : "Enable"} ${rule.name}`}>
        {rule.enabled ? "Disable" : "Enable"}
      </button>
      <button
        type="button"
        className="btn btn-danger"
        disabled={change.isPending}
        aria-label={`Delete ${rule.name}`}
        onClick={() => {
          if (window.confirm(`Delete the rule "${rule.name}" and its history?`)) change.mutate("delete");
        }}
      >
        Delete
      </button>
      {change.isError ? <span className="alert" role="alert">{change.error.message}</span> : null}
    </div>
  );
}

function EvaluateNow({ onDone }: { onDone: () => void }) {
  const run = useMutation({
    mutationFn: () => fetchJson<{ data: TickResult & { upcoming: UpcomingEvaluation[] } }>("/api/v1/alerts/evaluate", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }),
    onSettled: onDone,
  });
  const r = run.data?.data;
  const count = (o: string) => r?.evaluated.filter((e) => e.outcome === o).length ?? 0;
  return (
    <section className="card" aria-labelledby="evaluate-now">
      <div className="ops-toolbar">
        <h2 id="evaluate-now">Evaluate now</h2>
        <button type="button" className="btn" disabled={run.isPending} onClick={() => run.mutate()} data-testid="evaluate-now">Evaluate now</button>
      </div>
      <p className="muted alerts-hint">
        The server evaluates each rule once its window has closed (and sends due notifications); this runs that round at once. A window already evaluated is not evaluated again.
      </p>
      {run.isError ? <p className="alert" role="alert">{run.error.message}</p> : null}
      {r ? (
        <div className="notice" role="status" data-testid="evaluate-result">
          <p className="alerts-result-line">
            {r.evaluated.length === 0
              ? "Nothing to evaluate: every rule's latest closed window is already evaluated (the server's schedule got there first)."
              : `Evaluated ${r.evaluated.length} rule${r.evaluated.length === 1 ? "" : "s"}: ${count("fired")} fired, ${count("resolved")} resolved, ${count("no_verdict")} without a verdict.`}
            {r.delivered.length ? ` Notifications: ${r.delivered.filter((d) => d.status === "delivered").length} of ${r.delivered.length} delivered.` : ""}
          </p>
          <UpcomingList upcoming={r.upcoming.filter((u) => !r.evaluated.some((e) => e.ruleId === u.ruleId))} />
        </div>
      ) : null}
    </section>
  );
}

/** Why a rule had nothing to evaluate: when its last window was evaluated, and when its next one closes and is due. */
function UpcomingList({ upcoming }: { upcoming: UpcomingEvaluation[] }) {
  if (upcoming.length === 0) return null;
  return (
    <ul className="alerts-upcoming" data-testid="evaluate-upcoming">
      {upcoming.map((u) => (
        <li key={u.ruleId} data-rule-id={u.ruleId}>
          <strong>{u.name}</strong>:{" "}
          {u.lastWindowTo !== null ? (
            <>
              the window ending {formatDateTime(u.lastWindowTo * 1000)} UTC was evaluated
              {u.lastEvaluatedMs !== null ? <> at {formatDateTime(u.lastEvaluatedMs, { seconds: true })} UTC</> : null};{" "}
            </>
          ) : (
            <>not evaluated yet; </>
          )}
          the next window closes at {formatDateTime(u.next.to * 1000)} UTC and is evaluated from {formatDateTime(u.dueMs, { seconds: true })} UTC.
        </li>
      ))}
    </ul>
  );
}
