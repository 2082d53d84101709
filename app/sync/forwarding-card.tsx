import { formatAgo, formatDateTime, formatDuration, formatInt } from "@/app/_ops/format";
import type { ForwardingBacklog } from "@/lib/ingest/forward-backlog";

/**
 * ClickHouse mode only: webhook deliveries and recordings stored in SQLite that have not
 * reached ClickHouse yet (lib/ingest/forwarder.ts). The last error reaches admins only
 * (getForwardingStatus: it may name the ClickHouse host; it never holds the password).
 */
export function ForwardingCard({ backlog, now }: { backlog: ForwardingBacklog; now: number }) {
  const failing = backlog.failures > 0;
  const state = failing ? "failing" : backlog.pending === 0 ? "up to date" : "forwarding";
  return (
    <section className="section" aria-labelledby="sync-forwarding">
      <h2 id="sync-forwarding">Forwarding to ClickHouse</h2>
      <div className="card ops-card" data-testid="forwarding" data-state={state} data-pending={backlog.pending}>
        <div className="ops-card-head">
          <h3 className="ops-card-title">Webhook deliveries and recordings</h3>
          <span className={`ops-pill ${failing ? "ops-pill-failed" : backlog.pending === 0 ? "ops-pill-succeeded" : "ops-pill-running"}`}>
            {failing ? "Retrying" : backlog.pending === 0 ? "Up to date" : "Forwarding"}
          </span>
        </div>
        <dl className="ops-facts">
          <div>
            <dt>Waiting</dt>
            <dd data-testid="forwarding-pending">{backlog.exact ? "" : "about "}{formatInt(backlog.pending)}</dd>
          </div>
          <div>
            <dt>Oldest waiting</dt>
            <dd data-testid="forwarding-oldest">{backlog.oldestAgeSeconds === null ? "—" : formatDuration(backlog.oldestAgeSeconds * 1000)}</dd>
          </div>
          <div>
            <dt>Last forwarded</dt>
            <dd suppressHydrationWarning>{backlog.lastSuccessMs ? formatAgo(backlog.lastSuccessMs, Math.max(now, backlog.lastSuccessMs)) : "never"}</dd>
          </div>
          {failing ? (
            <div>
              <dt>Failed attempts</dt>
              <dd className="ops-danger">{formatInt(backlog.failures)}</dd>
            </div>
          ) : null}
          {failing && backlog.nextAttemptMs ? (
            <div>
              <dt>Next attempt</dt>
              <dd>{formatDateTime(backlog.nextAttemptMs, { seconds: true })} UTC</dd>
            </div>
          ) : null}
        </dl>
        {failing ? (
          <p className="alert" data-testid="forwarding-error">
            ClickHouse did not accept the last batch{backlog.lastError ? `: ${backlog.lastError}` : ""}. Nothing is lost: every
            delivery stays in the local warehouse and is sent again automatically.
          </p>
        ) : null}
      </div>
    </section>
  );
}
