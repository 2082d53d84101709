import { sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { CLIENT_VALUE_SQL, clientRows, type ClientCount } from "../../../clients";
import type { Filters } from "../../../filters";
import { CLIENT_DIMENSIONS, type ClientRow } from "../../../report-types";
import { resolveApps, visibleApps, type Scope } from "../../../scope";
import { hasCallFilters } from "./recordings";
import { and, appCondition, iterateRows, rawConditions, timeCondition } from "./sql";

/**
 * Clients and platforms (lib/analytics/clients.ts), counted in SQLite from the
 * `client_sessions` kept at ingest: every participant session ever stored, whatever the
 * raw deliveries' retention. `from`/`to` on the session's counted_at; call filters keep
 * the sessions of synced calls that match.
 */
export function getClients(db: Db, f: Filters, scope: Scope): ClientRow[] {
  const appPks = resolveApps(db, f, scope);
  const callFilter = hasCallFilters(f);
  const dims = sql.raw(CLIENT_DIMENSIONS.map((d) => `SELECT '${d}' AS dim`).join(" UNION ALL "));
  const value = sql.raw(`CASE d.dim ${CLIENT_DIMENSIONS.map((d) => `WHEN '${d}' THEN ${CLIENT_VALUE_SQL[d]}`).join(" ")} END`);
  const q = sql`SELECT s.app_pk AS appPk, d.dim AS dimension, ${value} AS value, count(*) AS sessions, count(DISTINCT s.session_id) AS calls
    FROM client_sessions s ${callFilter ? sql`JOIN calls c ON c.app_pk = s.app_pk AND c.session_id = s.session_id` : sql``}
    CROSS JOIN (${dims}) d
    WHERE ${and([appCondition("s.app_pk", appPks), timeCondition(f.from, f.to, "s.counted_at"), ...(callFilter ? rawConditions({ ...f, from: undefined, to: undefined }, appPks) : [])])}
    GROUP BY s.app_pk, d.dim, value`;
  const appIds = new Map(visibleApps(db, scope).map((a) => [a.pk, a.appId]));
  return clientRows(iterateRows<ClientCount>(db, q), (pk) => appIds.get(pk) ?? String(pk));
}
