import { count, eq, ne, sql, sum } from "drizzle-orm";
import { Counter, Gauge } from "prom-client";
import type { Db } from "@/db/client";
import { tablesOf } from "@/db/state";
import { syncAges } from "@/lib/health/sync-age";
import { clickHouseConfigured } from "@/lib/clickhouse/client";
import { readForwardingBacklog } from "@/lib/ingest/forward-backlog";
import { metrics } from "./registry";

/**
 * Metrics read from the warehouse at each scrape, whichever process did the work (the
 * server's schedule, `npm run sync`, the forwarder): syncs and calls synced by app (the
 * kept sync runs, so they drop when old runs are pruned, as a counter reset does), the age
 * of each app's last good sync, the ClickHouse forward backlog and the alert outbox.
 * A scrape runs a handful of grouped reads over small tables; one the warehouse cannot
 * answer (locked past the busy timeout, unreadable) leaves its series out of that scrape
 * instead of failing the whole scrape (/api/health says why). The reads are written once
 * for SQLite and Postgres (decision 0042: awaited, tables by `tablesOf`).
 */
const KEY = Symbol.for("callboard.metrics.warehouse");

export function registerWarehouseCollectors(open: () => Db, options: { syncMaxAgeSeconds: number }): void {
  const holder = globalThis as { [KEY]?: true };
  if (holder[KEY]) return;
  holder[KEY] = true;
  const registers = [metrics().registry];
  const read = async <T>(query: (db: Db) => T | Promise<T>, fallback: T): Promise<T> => {
    try {
      return await query(open());
    } catch {
      return fallback;
    }
  };

  new Counter({
    name: "callboard_syncs_total",
    help: "Finished syncs by app and outcome (succeeded, failed), from the kept sync runs.",
    labelNames: ["app", "outcome"],
    registers,
    async collect() {
      const rows = await read((db) => {
        const { syncRuns, apps } = tablesOf(db);
        return db
          .select({ app: apps.appId, outcome: syncRuns.status, n: count() })
          .from(syncRuns)
          .innerJoin(apps, eq(apps.pk, syncRuns.appPk))
          .where(ne(syncRuns.status, "running"))
          .groupBy(apps.appId, syncRuns.status);
      }, []);
      this.reset();
      for (const r of rows) this.inc({ app: r.app, outcome: r.outcome }, r.n);
    },
  });

  new Counter({
    name: "callboard_calls_synced_total",
    help: "Calls the syncs wrote (inserted or changed), by app, from the kept sync runs.",
    labelNames: ["app"],
    registers,
    async collect() {
      const rows = await read((db) => {
        const { syncRuns, apps } = tablesOf(db);
        return db
          .select({ app: apps.appId, n: sum(sql`${syncRuns.inserted} + ${syncRuns.updated}`).mapWith(Number) })
          .from(syncRuns)
          .innerJoin(apps, eq(apps.pk, syncRuns.appPk))
          .groupBy(apps.appId);
      }, []);
      this.reset();
      for (const r of rows) this.inc({ app: r.app }, r.n);
    },
  });

  const ages = () => read((db) => syncAges(db), []);
  new Gauge({
    name: "callboard_last_good_sync_age_seconds",
    help: "Seconds since each app's last successful sync (since it was added when it never synced).",
    labelNames: ["app"],
    registers,
    async collect() {
      const rows = await ages();
      this.reset();
      for (const a of rows) this.set({ app: a.appId }, a.ageSeconds);
    },
  });

  new Gauge({
    name: "callboard_sync_stale",
    help: "1 when an app's last good sync is older than SYNC_MAX_AGE_SECONDS (as /api/health lists it), else 0.",
    labelNames: ["app"],
    registers,
    async collect() {
      const rows = await ages();
      this.reset();
      for (const a of rows) this.set({ app: a.appId }, options.syncMaxAgeSeconds > 0 && a.ageSeconds > options.syncMaxAgeSeconds ? 1 : 0);
    },
  });

  // ClickHouse mode only: with the facts in SQLite nothing is forwarded, and no series says 0.
  if (clickHouseConfigured()) {
    new Gauge({
      name: "callboard_clickhouse_forward_backlog",
      help: "Webhook facts stored in SQLite (or Postgres) and not yet forwarded to ClickHouse (ClickHouse mode only).",
      registers,
      async collect() {
        const backlog = await read((db) => readForwardingBacklog(db), null);
        if (backlog) this.set(backlog.pending);
      },
    });

    new Gauge({
      name: "callboard_clickhouse_forward_oldest_age_seconds",
      help: "Age of the oldest fact waiting to be forwarded to ClickHouse (0 when none waits; ClickHouse mode only).",
      registers,
      async collect() {
        const backlog = await read((db) => readForwardingBacklog(db), null);
        if (backlog) this.set(backlog.oldestAgeSeconds ?? 0);
      },
    });
  }

  new Gauge({
    name: "callboard_alert_outbox",
    help: "Alert notifications in the outbox by status (pending: still to be sent or retried).",
    labelNames: ["status"],
    registers,
    async collect() {
      const rows = await read((db) => {
        const { alertOutbox } = tablesOf(db);
        return db.select({ status: alertOutbox.status, n: count() }).from(alertOutbox).groupBy(alertOutbox.status);
      }, null);
      this.reset();
      if (!rows) return;
      for (const status of ["pending", "delivered", "failed"]) this.set({ status }, rows.find((r) => r.status === status)?.n ?? 0);
    },
  });
}
