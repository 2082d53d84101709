"use client";

import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { UrlChoice } from "@/app/_ops/url-choice";
import { FilterBar } from "@/components/filter-bar";
import { formatAgo, formatDateTime, formatDuration, formatInt } from "@/app/_ops/format";
import { toQuery } from "@/lib/ops/params";
import { fetchJson } from "@/lib/ui/fetch-json";
import type { AppOption } from "@/lib/ops/scope";
import { useNow } from "@/app/_ops/use-now";
import type { ForwardingBacklog } from "@/lib/ingest/forward-backlog";
import type { AppSyncStatus, ManualSyncResult, SyncRunView } from "@/lib/sync/runs";
import { ForwardingCard } from "./forwarding-card";
import { STATUSES, SYNC_REFRESH_MS, type SyncParams } from "@/lib/ops/sync-params";
import { ScrollBox } from "@/components/scroll-box";

export interface SyncAnswer {
  data: SyncRunView[];
  apps: AppSyncStatus[];
  /** ClickHouse mode: what webhook ingest has stored and not yet forwarded (null otherwise). */
  forwarding?: ForwardingBacklog | null;
}

const TRIGGER_LABEL: Record<SyncRunView["trigger"], string> = { schedule: "Schedule", cli: "Command line", manual: "Sync now", demo: "Demo", test: "Test" };

export function SyncView({ params, apps, initial, isAdmin, loadedAtMs }: { params: SyncParams; apps: AppOption[]; initial: SyncAnswer; isAdmin: boolean; loadedAtMs: number }) {
  const url = `/api/v1/sync${toQuery({ app: params.app, status: params.status === "any" ? undefined : params.status, limit: params.limit, before: params.before })}`;
  const queryKey = ["sync-runs", params.app, params.status, params.limit, params.before];
  const runs = useQuery({
    queryKey,
    queryFn: () => fetchJson<SyncAnswer>(url),
    initialData: initial,
    initialDataUpdatedAt: loadedAtMs,
    placeholderData: keepPreviousData,
    refetchInterval: (q) =>
      q.state.data?.apps.some((a) => a.running) || (q.state.data?.forwarding?.pending ?? 0) > 0 ? SYNC_REFRESH_MS.running : SYNC_REFRESH_MS.idle,
  });
  const now = useNow(10_000, loadedAtMs);
  const { data, apps: statuses, forwarding } = runs.data;
  const skipped = data.flatMap((r) => r.skippedRecords.map((s, i) => ({ ...s, run: r, key: `${r.id}-${i}` }))).slice(0, 200);
  const last = data.at(-1);

  return (
    <>
      <div className="ops-head">
        <h1>Sync</h1>
        <p className="muted">Each app&apos;s calls are pulled from the platform&apos;s Calls API on a schedule and on demand.</p>
      </div>

      <FilterBar apps={apps} fields={["app", "tz"]} serverRendered>
        <UrlChoice id="sync-status" name="status" label="Run status" fallback="any" choices={STATUSES.map((s) => ({ value: s, label: s === "any" ? "Any" : s[0].toUpperCase() + s.slice(1) }))} />
      </FilterBar>

      {isAdmin ? <SyncNow apps={apps} onDone={() => runs.refetch()} /> : null}

      <section className="section" aria-labelledby="sync-apps">
        <h2 id="sync-apps">Apps</h2>
        {statuses.length === 0 ? (
          <div className="card ops-empty"><p>No tenant app to sync yet.</p></div>
        ) : (
          <ul className="ops-cards">
            {statuses.map((s) => (
              <li key={s.appId} className="card ops-card" data-app={s.appId}>
                <div className="ops-card-head">
                  <h3 className="ops-card-title">{s.appName}</h3>
                  <span className="muted">{s.appId}</span>
                  {s.running ? <span className="ops-pill ops-pill-running">Running</span> : s.lastRun ? <span className={`ops-pill ops-pill-${s.lastRun.status}`}>{s.lastRun.status === "succeeded" ? "OK" : "Failed"}</span> : null}
                </div>
                <dl className="ops-facts">
                  <div>
                    <dt>Last success</dt>
                    <dd suppressHydrationWarning>{s.lastSuccessfulSyncMs ? formatAgo(s.lastSuccessfulSyncMs, Math.max(now, s.lastSuccessfulSyncMs)) : "never"}</dd>
                  </div>
                  <div>
                    <dt>Last run</dt>
                    <dd>{s.lastRun ? formatDateTime(s.lastRun.startedMs, { tz: params.tz }) : "none"}</dd>
                  </div>
                  <div>
                    <dt>Failures since</dt>
                    <dd className={s.failuresSinceSuccess > 0 ? "ops-danger" : undefined}>{formatInt(s.failuresSinceSuccess)}</dd>
                  </div>
                </dl>
                {s.lastRun?.error ? <p className="alert">{s.lastRun.error}</p> : null}
              </li>
            ))}
          </ul>
        )}
      </section>

      {forwarding ? <ForwardingCard backlog={forwarding} now={now} /> : null}

      <section className="card section" aria-labelledby="sync-runs">
        <div className="ops-toolbar">
          <h2 id="sync-runs">Runs</h2>
          {runs.isError ? <span className="alert" role="alert">Could not refresh: {runs.error.message}</span> : null}
        </div>
        {data.length === 0 ? (
          <p className="muted section" data-testid="runs-empty">No run{params.status !== "any" ? ` with status ${params.status}` : ""} yet.</p>
        ) : (
          <ScrollBox labelledBy="sync-runs" className="section">
            <table className="ops-table" data-testid="sync-runs">
              <thead>
                <tr>
                  <th scope="col">Started ({params.tz})</th>
                  <th scope="col">App</th>
                  <th scope="col">Kind</th>
                  <th scope="col">By</th>
                  <th scope="col">Status</th>
                  <th scope="col" className="num">Duration</th>
                  <th scope="col" className="num">Pages</th>
                  <th scope="col" className="num">Inserted</th>
                  <th scope="col" className="num">Updated</th>
                  <th scope="col" className="num">Unchanged</th>
                  <th scope="col" className="num">Skipped</th>
                  <th scope="col">Error</th>
                </tr>
              </thead>
              <tbody>
                {data.map((r) => (
                  <tr key={r.id} data-run-id={r.id} data-app={r.appId}>
                    <td>{formatDateTime(r.startedMs, { tz: params.tz, seconds: true })}</td>
                    <td>{r.appId}</td>
                    <td>{r.kind}</td>
                    <td>{TRIGGER_LABEL[r.trigger]}</td>
                    <td><span className={`ops-pill ops-pill-${r.status}`}>{r.status}</span></td>
                    <td className="num">{r.status === "running" ? "…" : formatDuration(r.durationMs)}</td>
                    <td className="num">{formatInt(r.pages)}</td>
                    <td className="num">{formatInt(r.inserted)}</td>
                    <td className="num">{formatInt(r.updated)}</td>
                    <td className="num">{formatInt(r.unchanged)}</td>
                    <td className="num">{formatInt(r.skipped)}</td>
                    <td className="wrap">{r.error ? <span className="ops-danger">{r.error}</span> : <span className="muted">—</span>}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollBox>
        )}
        {data.length === params.limit && last ? (
          <p className="ops-pager">
            <Link href={`/sync${toQuery({ app: params.app, status: params.status === "any" ? undefined : params.status, tz: params.tz === "UTC" ? undefined : params.tz, before: last.id })}`}>Older runs</Link>
          </p>
        ) : null}
      </section>

      <section className="card section" aria-labelledby="sync-skipped">
        <h2 id="sync-skipped">Skipped records</h2>
        {skipped.length === 0 ? (
          <p className="muted" data-testid="skipped-empty">No record was skipped in these runs.</p>
        ) : (
          <ScrollBox labelledBy="sync-skipped">
            <table className="ops-table" data-testid="skipped">
              <thead>
                <tr>
                  <th scope="col">Run</th>
                  <th scope="col">App</th>
                  <th scope="col">Session</th>
                  <th scope="col">Reason</th>
                </tr>
              </thead>
              <tbody>
                {skipped.map((s) => (
                  <tr key={s.key}>
                    <td>{formatDateTime(s.run.startedMs, { tz: params.tz })}</td>
                    <td>{s.run.appId}</td>
                    <td>{s.sessionId ? <code className="ops-id" title={s.sessionId}>{s.sessionId}</code> : <span className="muted">unknown</span>}</td>
                    <td className="wrap">{s.reason}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollBox>
        )}
      </section>
    </>
  );
}

function SyncNow({ apps, onDone }: { apps: AppOption[]; onDone: () => void }) {
  const [app, setApp] = useState("");
  const client = useQueryClient();
  const sync = useMutation({
    mutationFn: () =>
      fetchJson<{ data: ManualSyncResult[] }>("/api/v1/sync", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(app ? { app } : {}),
      }),
    onSettled: () => {
      void client.invalidateQueries({ queryKey: ["sync-runs"] });
      onDone();
    },
  });
  return (
    <section className="card" aria-labelledby="sync-now">
      <h2 id="sync-now">Sync now</h2>
      <form
        className="row-form"
        onSubmit={(e) => {
          e.preventDefault();
          sync.mutate();
        }}
      >
        <div className="field">
          <label htmlFor="sync-now-app">App</label>
          <select id="sync-now-app" value={app} onChange={(e) => setApp(e.target.value)}>
            <option value="">All apps</option>
            {apps.map((a) => (
              <option key={a.appId} value={a.appId}>{a.name} ({a.appId})</option>
            ))}
          </select>
        </div>
        <button type="submit" className="btn" disabled={sync.isPending} data-testid="sync-now">
          {sync.isPending ? "Syncing…" : "Sync now"}
        </button>
      </form>
      <div role="status" className="section" data-testid="sync-result">
        {sync.isError ? <p className="alert">{sync.error.message}</p> : null}
        {sync.data ? (
          <ul className="stack" style={{ listStyle: "none", padding: 0, margin: 0 }}>
            {sync.data.data.map((r) => (
              <li key={r.appId} className={r.status === "failed" ? "alert" : "notice"}>
                <strong>{r.appId}</strong>: {describeResult(r)}
              </li>
            ))}
          </ul>
        ) : null}
      </div>
    </section>
  );
}

function describeResult(r: ManualSyncResult): string {
  switch (r.status) {
    case "succeeded":
      return `done in ${formatDuration(r.durationMs)}: ${formatInt(r.inserted)} new, ${formatInt(r.updated)} updated, ${formatInt(r.unchanged)} unchanged, ${formatInt(r.skipped)} skipped.`;
    case "running":
      return "still running; the table below updates when it ends.";
    case "already_running":
      return "a sync of this app is already running.";
    default:
      return `failed: ${r.error ?? "unknown error"}`;
  }
}
