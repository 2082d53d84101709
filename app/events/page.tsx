import type { Metadata } from "next";
import Link from "next/link";
import { redirect } from "next/navigation";
import { db } from "@/db";
import "@/app/_ops/ops.css";
import { Kpi, KpiList } from "@/components/kpi-tiles";
import { UrlChoice } from "@/app/_ops/url-choice";
import { formatDateTime, formatInt } from "@/app/_ops/format";
import { PageError } from "@/components/page-error";
import { pageErrorMessage } from "@/components/server/page-error-message";
import { HttpError } from "@/lib/http/errors";
import { toQuery } from "@/lib/ops/params";
import { appOptions, scopeAppPks } from "@/lib/ops/scope";
import { currentCaller } from "@/lib/auth/session";
import { eventCounts } from "@/lib/analytics/event-counts";
import { getRecentDeliveries } from "@/lib/ingest/queries";
import { EventsChart } from "./events-chart";
import { chartDays, daysWindow, eventsParamsSchema, eventsWindow, OUTCOMES } from "@/lib/ops/events-params";
import { countRow, deliveryRow, sortCountRows, toDailyChart } from "@/lib/ops/events-rows";
import { ScrollBox } from "@/components/scroll-box";
import { FilterBar } from "@/components/filter-bar";
import { formatDay } from "@/lib/ui/format";
import { CsvLink } from "@/components/panel";
import { LinkPager } from "@/components/pager";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Events" };

const PAGE_ROWS = 50;
const OUTCOME_LABEL: Record<(typeof OUTCOMES)[number], string> = {
  all: "All", accepted: "Accepted", rejected: "Rejected", applied: "Applied", stored: "Stored only", failed: "Failed to apply",
};

export default async function EventsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const caller = await currentCaller();
  const warehouse = db();
  let p, appPks;
  try {
    p = eventsParamsSchema.parse(await searchParams);
    appPks = await scopeAppPks(warehouse, caller, p.app);
  } catch (error) {
    const message = pageErrorMessage(error);
    if (message === null) throw error;
    return <PageError title="Events" message={message} resetHref="/events" />;
  }
  if (p.days !== undefined && p.from === undefined && p.to === undefined) {
    // The older `days=N` link: the same period in the filter bar's terms, so the bar shows it.
    const { from: f, to: t } = daysWindow(p.days, p.tz);
    redirect(`/events${toQuery({ app: p.app, from: f, to: t, tz: p.tz === "UTC" ? undefined : p.tz, outcome: p.outcome === "all" ? undefined : p.outcome, limit: p.limit === 50 ? undefined : p.limit })}`);
  }
  const window = eventsWindow(p);
  const { from, to } = window;
  let counts;
  try {
    counts = sortCountRows((await eventCounts(warehouse, appPks, { from, to, tz: p.tz })).map(countRow));
  } catch (error) {
    // ClickHouse not reachable (a 503 HttpError): its message, not the generic error page.
    if (!(error instanceof HttpError)) throw error;
    return <PageError title="Events" message={error.message} resetHref="/events" resetLabel="Try again" />;
  }
  const dayList = chartDays(window, counts.at(-1)?.day, p.tz);
  const period = `${formatDay(dayList[0], true)} – ${formatDay(dayList[dayList.length - 1], true)}`;
  const deliveries = (await getRecentDeliveries(warehouse, appPks, { outcome: p.outcome, limit: p.limit })).map((d) => deliveryRow(d, p.tz));
  const points = toDailyChart(counts, dayList);
  const total = counts.reduce((n, r) => n + r.count, 0);
  const chatTotal = counts.filter((r) => r.category === "chat").reduce((n, r) => n + r.count, 0);
  const triggers = new Set(counts.map((r) => r.trigger)).size;
  const pages = Math.max(1, Math.ceil(counts.length / PAGE_ROWS));
  const page = Math.min(p.page, pages);
  const shown = counts.slice((page - 1) * PAGE_ROWS, page * PAGE_ROWS);
  const rejectedShown = deliveries.filter((d) => d.kind === "rejected").length;

  const base = { app: p.app, from: p.from, to: p.to, days: p.days, tz: p.tz === "UTC" ? undefined : p.tz, outcome: p.outcome === "all" ? undefined : p.outcome, limit: p.limit === 50 ? undefined : p.limit };
  const countsCsv = `/api/v1/events${toQuery({ app: p.app, from: p.from, to: p.to, days: p.days, tz: p.tz, format: "csv" })}`;
  const deliveriesCsv = `/api/v1/events/deliveries${toQuery({ app: p.app, outcome: p.outcome, limit: p.limit, tz: p.tz, format: "csv" })}`;
  const pageHref = (n: number) => `/events${toQuery({ ...base, page: n === 1 ? undefined : n })}`;

  return (
    <main id="main" tabIndex={-1} className="container">
      <div className="ops-head">
        <h1>Events</h1>
        <p className="muted">Webhook deliveries per day: chat-side triggers next to calls, each event counted once.</p>
      </div>

      <FilterBar apps={await appOptions(warehouse, caller)} fields={["app", "period", "tz"]} serverRendered>
        <UrlChoice id="events-outcome" name="outcome" label="Deliveries" fallback="all" choices={OUTCOMES.map((o) => ({ value: o, label: OUTCOME_LABEL[o] }))} />
      </FilterBar>

      <KpiList className="section">
        <Kpi label={window.allTime ? "Events, all time" : "Events in the period"} value={formatInt(total)} valueTestId="events-total" />
        <Kpi label="Chat-side events" value={formatInt(chatTotal)} valueTestId="events-chat" />
        <Kpi label="Distinct triggers" value={formatInt(triggers)} />
        <Kpi label="Rejected (of those listed)" value={formatInt(rejectedShown)} valueTestId="events-rejected" />
      </KpiList>

      <section className="card section" aria-labelledby="events-per-day">
        <div className="ops-toolbar">
          <h2 id="events-per-day">
            Events per day, {period} ({p.tz})
          </h2>
          <CsvLink href={countsCsv} what="events per day and trigger" testId="events-csv" />
        </div>
        {total === 0 ? (
          <p className="muted" data-testid="events-empty">
            No event in this period. Chat triggers are counted as the platform delivers them to each app&apos;s ingest URL.
          </p>
        ) : (
          <EventsChart points={points} total={total} />
        )}
      </section>

      <section className="card section" aria-labelledby="events-table">
        <div className="ops-toolbar">
          <h2 id="events-table">Per day and trigger</h2>
          <span className="muted">{formatInt(counts.length)} rows</span>
        </div>
        {counts.length === 0 ? (
          <p className="muted">Nothing to list.</p>
        ) : (
          <ScrollBox labelledBy="events-table">
            <table className="ops-table" data-testid="events-counts">
              <thead>
                <tr>
                  <th scope="col">Day ({p.tz})</th>
                  <th scope="col">App</th>
                  <th scope="col">Trigger</th>
                  <th scope="col">Category</th>
                  <th scope="col" className="num">Events</th>
                </tr>
              </thead>
              <tbody>
                {shown.map((r) => (
                  <tr key={`${r.day}|${r.app}|${r.trigger}`}>
                    <td data-day={r.day}>{formatDay(r.day, true)}</td>
                    <td>{r.app}</td>
                    <td><code>{r.trigger}</code></td>
                    <td>{r.category}</td>
                    <td className="num">{formatInt(r.count)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollBox>
        )}
        {pages > 1 ? <LinkPager page={page} pageCount={pages} total={counts.length} href={pageHref} label="Pages of the per-day table" /> : null}
      </section>

      <section className="card section" aria-labelledby="events-deliveries">
        <div className="ops-toolbar">
          <h2 id="events-deliveries">Recent deliveries{p.outcome === "all" ? "" : `: ${OUTCOME_LABEL[p.outcome].toLowerCase()}`}</h2>
          <div className="ops-actions">
            {p.outcome !== "rejected" ? <Link href={`/events${toQuery({ ...base, outcome: "rejected" })}`}>Only rejected</Link> : <Link href={`/events${toQuery({ ...base, outcome: undefined })}`}>All deliveries</Link>}
            <CsvLink href={deliveriesCsv} what="recent deliveries" testId="deliveries-csv" />
          </div>
        </div>
        {deliveries.length === 0 ? (
          <p className="muted" data-testid="deliveries-empty">
            {p.outcome === "rejected" ? "No delivery was rejected." : "No delivery received yet."}
          </p>
        ) : (
          <ScrollBox labelledBy="events-deliveries">
            <table className="ops-table" data-testid="deliveries">
              <thead>
                <tr>
                  <th scope="col">Received ({p.tz})</th>
                  <th scope="col">App</th>
                  <th scope="col">Trigger</th>
                  <th scope="col">Outcome</th>
                  <th scope="col">Session / reason</th>
                  <th scope="col" className="num">Repeats</th>
                </tr>
              </thead>
              <tbody>
                {deliveries.map((d) => (
                  <tr key={`${d.kind}-${d.id}`} data-kind={d.kind}>
                    <td>{formatDateTime(d.receivedMs, { tz: p.tz, seconds: true })}</td>
                    <td>{d.app}</td>
                    <td>{d.trigger ? <code>{d.trigger}</code> : <span className="muted">—</span>}</td>
                    <td>
                      {d.kind === "rejected" ? (
                        <span className="ops-pill ops-pill-rejected">Rejected {d.outcome}</span>
                      ) : (
                        <span className={`ops-pill ops-pill-${d.outcome}`}>{d.outcome}</span>
                      )}
                    </td>
                    <td className="wrap">
                      {d.kind === "rejected" ? (
                        <span data-testid="reject-reason"><code>{d.code}</code> {d.reason}</span>
                      ) : d.sessionId ? (
                        <code className="ops-id" title={d.sessionId}>{d.sessionId}</code>
                      ) : (
                        <span className="muted">—</span>
                      )}
                    </td>
                    <td className="num">{d.kind === "accepted" ? formatInt(d.repeats) : ""}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollBox>
        )}
        <p className="ops-hint">The newest {formatInt(p.limit)}; bodies are never shown (they can hold message texts).</p>
      </section>
    </main>
  );
}
