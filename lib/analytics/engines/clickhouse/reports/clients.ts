import { and, raw, sql } from "@/lib/clickhouse";
import { CLIENT_VALUE_SQL, clientRows, type ClientCount } from "@/lib/analytics/clients";
import type { Filters } from "@/lib/analytics/filters";
import { CLIENT_DIMENSIONS, type ClientRow } from "@/lib/analytics/report-types";
import type { Scope } from "@/lib/analytics/scope";
import { appScope, tablesOf, type ChContext } from "../context";
import { matchingCallKeysLocal } from "../conditions";
import { hasCallFilters } from "./recordings";

/**
 * Clients and platforms, counted as the in-memory engine counts them (lib/analytics/
 * clients.ts), from the `client_sessions` the forwarder (or the copy) carried from SQLite.
 * The table is sharded with its calls (app, session): each shard counts its own sessions
 * and call filters look the calls up shard by shard; distinct calls add up across shards.
 */
export async function getClients(ctx: ChContext, f: Filters, scope: Scope, signal?: AbortSignal): Promise<ClientRow[]> {
  const apps = appScope(ctx, f, scope);
  if (apps.pks.length === 0) return [];
  const t = tablesOf(ctx.ch);
  const conds = [sql`app_pk IN ${apps.pks}`];
  if (f.from !== undefined) conds.push(sql`counted_at >= ${f.from}`);
  if (f.to !== undefined) conds.push(sql`counted_at < ${f.to}`);
  if (hasCallFilters(f)) {
    conds.push(sql`(app_pk, session_id) IN (${matchingCallKeysLocal(t, { ...f, from: undefined, to: undefined }, apps.pks)})`);
  }
  const values = raw(`[${CLIENT_DIMENSIONS.map((d) => `('${d}', ${CLIENT_VALUE_SQL[d]})`).join(", ")}]`);
  const query = sql`SELECT app_pk AS appPk, d.1 AS dimension, d.2 AS value, count() AS sessions, uniqExact(session_id) AS calls
    FROM (SELECT app_pk, session_id, platform, sdk, call_version, is_audio_only, audio_call, is_video_muted FROM ${t.clientSessions} FINAL WHERE ${and(conds)})
    ARRAY JOIN ${values} AS d
    GROUP BY appPk, dimension, value`.text;
  return clientRows(await ctx.ch.rows<ClientCount>(query, signal), apps.appId);
}
