import { Counter, Gauge } from "prom-client";
import type { Db } from "@/db/client";
import { syncAges } from "@/lib/health/sync-age";
import { clickHouseConfigured } from "@/lib/clickhouse/client";
import { getForwardingBacklog } from "@/lib/ingest/forward-backlog";
import { metrics } from "./registry";

/**
 * Metrics read from the warehouse at each scrape, whichever process did the work (the
 * server's schedule, `npm run sync`, the forwarder): syncs and calls synced by app (the
 * kept sync runs, so they drop when old runs are pruned, as a counter reset does), the age
 * of each app's last good sync, the ClickHouse forward backlog and the alert outbox.
 * A scrape runs a handful of grouped reads over small tables; one the warehouse cannot
 * answer (locked past the busy timeout, unreadable) leaves its series out of that scrape
 * instead of failing the whole scrape (/api/health says why).
 */
const KEY = Symbol.for("callboard.metrics.warehouse");

export function registerWarehouseCollectors(open: () => Db, options: { syncMaxAgeSeconds: number }): void {
  const holder = globalThis as { [KEY]?: true };
  if (holder[KEY]) return;
  holder[KEY] = true;
  const registers = [metrics().registry];
  const read = <T>(query: (db: Db) => T, fallback: T): T => {
    try {
      return query(open());
    } catch {
      return fallback;
    }
  };

  new Counter({
    name: "callboard_syncs_total",
    help: "Finished syncs by app and outcome (succeeded, failed), from the kept sync runs.",
    labelNames: ["app", "outcome"],
    registers,
    collect() {
      this.reset();
      const rows = read(
        (db) =>
          db.$client
            .prepare<[], { app: string; outcome: string; n: number }>(
              "SELECT a.app_id AS app, r.status AS outcome, count(*) AS n FROM sync_runs r JOIN apps a ON a.pk = r.app_pk WHERE r.status <> 'running' GROUP BY 1, 2",
            )
            .all(),
        [],
      );
      for (const r of rows) this.inc({ app: r.app, outcome: r.outcome }, r.n);
    },
  });

  new Counter({
    name: "callboard_calls_synced_total",
    help: "Calls the syncs wrote (inserted or changed), by app, from the kept sync runs.",
    labelNames: ["app"],
    registers,
    collect() {
      this.reset();
      const rows = read(
        (db) =>
          db.$client
            .prepare<[], { app: string; n: number }>("SELECT a.app_id AS app, sum(r.inserted + r.updated) AS n FROM sync_runs r JOIN apps a ON a.pk = r.app_pk GROUP BY 1")
            .all(),
        [],
      );
      for (const r of rows) this.inc({ app: r.app }, r.n);
    },
  });

  const ages = () => read((db) => syncAges(db), []);
  new Gauge({
    name: "callboard_last_good_sync_age_seconds",
    help: "Seconds since each app's last successful sync (since it was added when it never synced).",
    labelNames: ["app"],
    registers,
    collect() {
      this.reset();
      for (const a of ages()) this.set({ app: a.appId }, a.ageSeconds);
    },
  });

  new Gauge({
    name: "callboard_sync_stale",
    help: "1 when an app's last good sync is older than SYNC_MAX_AGE_SECONDS (as /api/health lists it), else 0.",
    labelNames: ["app"],
    registers,
    collect() {
      this.reset();
      for (const a of ages()) this.set({ app: a.appId }, options.syncMaxAgeSeconds > 0 && a.ageSeconds > options.syncMaxAgeSeconds ? 1 : 0);
    },
  });

  // ClickHouse mode only: with the facts in SQLite nothing is forwarded, and no series says 0.
  if (clickHouseConfigured()) {
    new Gauge({
      name: "callboard_clickhouse_forward_backlog",
      help: "Webhook facts stored in SQLite and not yet forwarded to ClickHouse (ClickHouse mode only).",
      registers,
      collect() {
        const backlog = read((db) => getForwardingBacklog(db), null);
        if (backlog) this.set(backlog.pending);
      },
    });

    new Gauge({
      name: "callboard_clickhouse_forward_oldest_age_seconds",
      help: "Age of the oldest fact waiting to be forwarded to ClickHouse (0 when none waits; ClickHouse mode only).",
      registers,
      collect() {
        const backlog = read((db) => getForwardingBacklog(db), null);
        if (backlog) this.set(backlog.oldestAgeSeconds ?? 0);
      },
    });
  }

  new Gauge({
    name: "callboard_alert_outbox",
    help: "Alert notifications in the outbox by status (pending: still to be sent or retried).",
    labelNames: ["status"],
    registers,
    collect() {
      this.reset();
      const rows = read((db) => db.$client.prepare<[], { status: string; n: number }>("SELECT status, count(*) AS n FROM alert_outbox GROUP BY 1").all(), null);
      if (!rows) return;
      for (const status of ["pending", "delivered", "failed"]) this.set({ status }, rows.find((r) => r.status === status)?.n ?? 0);
    },
  });
}
