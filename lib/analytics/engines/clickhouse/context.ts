import type { Db } from "@/db/client";
import { localName, qualified, raw, type ClickHouse, type Sql } from "@/lib/clickhouse";
import type { Filters } from "@/lib/analytics/filters";
import { listAppRefs, resolveAmong, resolveApps, visibleAmong, visibleApps, type AppRef, type Scope } from "@/lib/analytics/scope";

/**
 * What every ClickHouse report runs against: the ClickHouse holding the facts, and the
 * state store holding the apps (names, who may see which): the SQLite file, or Postgres
 * with DATABASE_URL. Apps are resolved there and reach every query as the list of app pks
 * it may read — the viewer's isolation, inside the query itself (conditions.ts).
 */
export interface ChContext {
  ch: ClickHouse;
  db: () => Db;
  /**
   * Every app, read once per answer by `withApps` (the engine does, before any report):
   * Postgres can only be read asynchronously, and the reports resolve their apps
   * synchronously (`appScope`). Absent, `appScope` reads the SQLite file itself.
   */
  apps?: readonly AppRef[];
}

/** `ctx` with every app read from its state store (SQLite or Postgres), for one answer. */
export async function withApps(ctx: ChContext): Promise<ChContext> {
  const apps = await listAppRefs(ctx.db());
  return {
    get ch() {
      return ctx.ch;
    },
    db: ctx.db,
    apps,
  };
}

/**
 * The warehouse's tables as a query names them (database-qualified). The call facts are
 * schema v2's signed rows (lib/clickhouse/schema-v2.ts; docs/decisions/0034): read with
 * `sum(sign)` / `sum(sign × value)`, or as live rows (conditions.ts `liveSql`), never FINAL.
 */
export interface Tables {
  /** Every shard's signed call rows (the Distributed table in a cluster). */
  calls: Sql;
  /** Every shard's signed participant rows (co-sharded with their calls). */
  participants: Sql;
  /** uid codes back to uids (any shard may hold a code: read DISTINCT). */
  uids: Sql;
  /** The platform's record of each call, by key (one call's page). */
  callRaw: Sql;
  recordings: Sql;
  eventCounts: Sql;
  /** The webhook deliveries the forwarder copied (sharded by their idempotency key, not by call). */
  deliveries: Sql;
  /** Participant sessions and their clients (co-sharded with their calls). */
  clientSessions: Sql;
  /** Pre-aggregates kept by views over the signed rows (Distributed in a cluster). */
  callsByBucket: Sql;
  callsByMonth: Sql;
  participantsByMonth: Sql;
  /** participants_by_month per the call's closed sets too (migration 0012): the filtered participants reports' months. */
  participantsByMonthDims: Sql;
  /** The concurrency heatmap's per quarter hour sums (ClickHouse migration 0011). */
  concurrencyByQuarter: Sql;
  /** A shard's own rows: for IN subqueries over a co-sharded table, evaluated shard by shard. */
  callsLocal: Sql;
  participantsLocal: Sql;
  recordingsLocal: Sql;
}

export function tablesOf(ch: ClickHouse): Tables {
  const p = ch.placement;
  const t = (name: string) => raw(qualified(p.database, name));
  return {
    calls: t("calls_v2"),
    participants: t("participants_v2"),
    uids: t("uids"),
    callRaw: t("call_raw"),
    recordings: t("recordings"),
    eventCounts: t("event_counts"),
    deliveries: t("webhook_deliveries"),
    clientSessions: t("client_sessions"),
    callsByBucket: t("calls_by_bucket"),
    callsByMonth: t("calls_by_month"),
    participantsByMonth: t("participants_by_month"),
    participantsByMonthDims: t("participants_by_month_dims"),
    concurrencyByQuarter: t("concurrency_by_quarter"),
    callsLocal: t(localName(p, "calls_v2")),
    participantsLocal: t(localName(p, "participants_v2")),
    recordingsLocal: t(localName(p, "recordings")),
  };
}

/** The apps a request reads: their pks (never empty of meaning: [] reads nothing) and their ids. */
export interface AppScope {
  /** Requested and visible apps that exist, or every visible app. */
  pks: number[];
  /** Every app the caller may see, by app id (the order of the apps report). */
  visible: AppRef[];
  appId: (pk: number) => string;
}

/**
 * Resolves the request's apps in the state store: a requested app that does not exist or
 * is not visible is a 404 (resolveApps); a removed app's pk is never read (only apps that
 * exist are kept: its facts may still sit in ClickHouse until cleaned up).
 */
export function appScope(ctx: ChContext, f: Pick<Filters, "apps">, scope: Scope): AppScope {
  const every = ctx.apps;
  const visible = every ? visibleAmong(every, scope) : visibleApps(ctx.db(), scope);
  const resolved = every ? resolveAmong(visible, f, scope) : resolveApps(ctx.db(), f, scope);
  const ids = new Map(visible.map((a) => [a.pk, a.appId]));
  const pks = resolved === "all" ? visible.map((a) => a.pk) : resolved.filter((p) => ids.has(p));
  return { pks, visible, appId: (pk) => ids.get(pk) ?? String(pk) };
}
