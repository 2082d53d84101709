"use client";

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { formatAgo, formatClock, formatDateTime, formatInt, formatTime } from "@/app/_ops/format";
import { Kpi, KpiList } from "@/components/kpi-tiles";
import { UrlChoice } from "@/app/_ops/url-choice";
import { FilterBar } from "@/components/filter-bar";
import { toQuery } from "@/lib/ops/params";
import { fetchJson } from "@/lib/ui/fetch-json";
import type { AppOption } from "@/lib/ops/scope";
import { useNow } from "@/app/_ops/use-now";
import type { LiveOccupant, LiveSession } from "@/lib/ingest/queries";
import { LIVE_REFRESH_MS, RECENT_CHOICES, type LiveParams } from "@/lib/ops/live-params";
import { ScrollBox } from "@/components/scroll-box";
import { callHref } from "@/lib/ui/pages";

export interface LiveAnswer {
  data: LiveSession[];
  meta: { asOfMs: number; recentMinutes: number };
}

const STATUS_LABEL: Record<LiveSession["status"], string> = { initiated: "Ringing", ongoing: "Ongoing", ended: "Ended" };

function media(o: LiveOccupant): string {
  if (o.audioOnly === null) return "—";
  return o.audioOnly ? "Audio" : "Video";
}

const secMs = (s: number | null) => (s === null ? null : s * 1000);

export function LiveView({ params, apps, initial, isAdmin }: { params: LiveParams; apps: AppOption[]; initial: LiveAnswer; isAdmin: boolean }) {
  const query = toQuery({ app: params.app, recent: params.recent });
  const live = useQuery({
    queryKey: ["live", params.app, params.recent],
    queryFn: () => fetchJson<LiveAnswer>(`/api/v1/live${query}`),
    initialData: initial,
    initialDataUpdatedAt: initial.meta.asOfMs,
    refetchInterval: LIVE_REFRESH_MS,
    refetchIntervalInBackground: false,
    placeholderData: keepPreviousData,
  });
  const now = useNow(1000, initial.meta.asOfMs);
  const sessions = live.data.data;
  const going = sessions.filter((s) => s.status !== "ended");
  const ended = sessions.filter((s) => s.status === "ended");
  const appName = new Map(apps.map((a) => [a.appId, a.name]));

  return (
    <>
      <div className="ops-head">
        <h1>Live now</h1>
        <p className="muted ops-updated">
          From the platform&apos;s webhooks, refreshed every {LIVE_REFRESH_MS / 1000} s ·{" "}
          <span suppressHydrationWarning data-testid="live-updated">updated {formatAgo(live.dataUpdatedAt, Math.max(now, live.dataUpdatedAt))}</span>
          {live.isFetching ? <span className="ops-dot" aria-hidden="true" /> : null}
        </p>
      </div>

      <FilterBar apps={apps} fields={["app", "tz"]} serverRendered>
        <UrlChoice
          id="live-recent"
          name="recent"
          label="Also show ended"
          fallback={15}
          choices={RECENT_CHOICES.map((m) => ({ value: m, label: m === 0 ? "No" : m < 60 ? `In the last ${m} min` : `In the last ${m / 60} h` }))}
        />
      </FilterBar>

      {live.isError ? (
        <p className="alert section" role="alert">
          Could not refresh: {live.error.message} Showing what was known {formatAgo(live.dataUpdatedAt, now)}.
        </p>
      ) : null}

      <KpiList className="section">
        <Kpi label="Calls now" value={formatInt(going.filter((s) => s.kind === "call").length)} valueTestId="live-calls" />
        <Kpi label="Meetings and presenter calls now" value={formatInt(going.filter((s) => s.kind === "meet").length)} valueTestId="live-meetings" />
        <Kpi label="Ringing" value={formatInt(going.filter((s) => s.status === "initiated").length)} />
        <Kpi label="People in them" value={formatInt(going.reduce((n, s) => n + s.presentCount, 0))} valueTestId="live-people" />
      </KpiList>

      <section className="section" aria-labelledby="live-going">
        <h2 id="live-going">Going on now</h2>
        {going.length === 0 ? (
          <div className="card ops-empty" data-testid="live-empty">
            <p><strong>Nothing is going on right now.</strong></p>
            <p className="muted">
              Calls and meetings appear here as the platform sends their webhooks (call_started, participant joined and left…).
              {isAdmin ? (
                <>
                  {" "}Check that each app&apos;s webhook points at its ingest URL in <Link href="/settings/apps">Settings → Tenant apps</Link>.
                </>
              ) : null}
            </p>
          </div>
        ) : (
          <ul className="ops-cards" data-testid="live-sessions">
            {going.map((s) => (
              <SessionCard key={`${s.appId}/${s.sessionId}`} s={s} now={now} appName={appName.get(s.appId) ?? s.appId} tz={params.tz} />
            ))}
          </ul>
        )}
      </section>

      {params.recent > 0 ? (
        <section className="section" aria-labelledby="live-ended">
          <h2 id="live-ended">Ended recently</h2>
          {ended.length === 0 ? (
            <p className="muted">No call or meeting ended in the last {params.recent < 60 ? `${params.recent} minutes` : `${params.recent / 60} hours`}.</p>
          ) : (
            <ul className="ops-cards" data-testid="live-ended">
              {ended.map((s) => (
                <SessionCard key={`${s.appId}/${s.sessionId}`} s={s} now={now} appName={appName.get(s.appId) ?? s.appId} tz={params.tz} />
              ))}
            </ul>
          )}
        </section>
      ) : null}
    </>
  );
}

function SessionCard({ s, now, appName, tz }: { s: LiveSession; now: number; appName: string; tz: string }) {
  const detail = callHref({ app: s.appId, sessionId: s.sessionId }, tz);
  const start = s.startedAt ?? s.initiatedAt;
  const end = s.status === "ended" ? (s.endedAt ?? Math.floor(s.lastEventMs / 1000)) : now / 1000;
  const headingId = `live-${s.appId}-${s.sessionId}`.replace(/[^a-zA-Z0-9_-]/g, "_");
  return (
    <li className="card ops-card" data-session-id={s.sessionId} data-status={s.status} aria-labelledby={headingId}>
      <div className="ops-card-head">
        <span className={`ops-pill ops-pill-${s.status}`}>{STATUS_LABEL[s.status]}</span>
        {/* The platform sends meeting_* webhooks for meet and presenter sessions alike: live, the two cannot be told apart (the Calls list can, once synced). */}
        <span className="badge" title={s.kind === "meet" ? "From the meeting webhooks: a meeting or a presenter call" : undefined}>{s.kind === "meet" ? "Meeting / presenter" : "Call"}</span>
        <span className="muted ops-card-app">{appName}</span>
      </div>
      <h3 id={headingId} className="ops-card-title">
        <Link href={detail} data-testid="live-call-link">
          {s.initiator ?? "Someone"} {s.receiver ? <>→ {s.receiver}{s.receiverType === "group" ? " (group)" : ""}</> : null}
        </Link>
      </h3>
      <dl className="ops-facts">
        <div>
          <dt>{s.status === "ended" ? "Lasted" : s.startedAt ? "In progress" : "Ringing for"}</dt>
          <dd suppressHydrationWarning data-testid="elapsed">{start ? formatClock(end - start) : "—"}</dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd>{s.startedAt ? formatDateTime(secMs(s.startedAt), { tz, seconds: true }) : "not yet"}</dd>
        </div>
        <div>
          <dt>Session</dt>
          <dd><Link href={detail} className="ops-id" title={`Call detail of ${s.sessionId}`}>{s.sessionId}</Link></dd>
        </div>
      </dl>
      {s.occupants.length === 0 ? (
        <p className="muted">Nobody has joined yet.</p>
      ) : (
        <ScrollBox label={`Who is in ${s.initiator ?? "this"} ${s.kind === "meet" ? "meeting" : "call"}`}>
          <table className="ops-table">
            <caption className="sr-only">Who is in this {s.kind === "meet" ? "meeting" : "call"}</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Joined ({tz})</th>
                <th scope="col">Left</th>
                <th scope="col">Media</th>
              </tr>
            </thead>
            <tbody>
              {s.occupants.map((o, i) => (
                <tr key={`${o.name}-${o.joinedAt ?? i}`} data-occupant={o.name} className={o.leftAt !== null ? "muted" : undefined}>
                  <td><Link href={`${detail}#participants`} title={`${o.name} in the call detail`}>{o.name}</Link></td>
                  <td>{o.joinedAt ? formatTime(o.joinedAt, tz) : "—"}</td>
                  <td>{o.leftAt ? formatTime(o.leftAt, tz) : s.status === "ended" ? "—" : "still in"}</td>
                  <td>{media(o)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      )}
    </li>
  );
}
