import { and, sql } from "@/lib/clickhouse";
import { ClientCounter, JOIN_TRIGGERS, joinFactsOfBody } from "@/lib/analytics/clients";
import type { Filters } from "@/lib/analytics/filters";
import type { ClientRow } from "@/lib/analytics/report-types";
import type { Scope } from "@/lib/analytics/scope";
import { appScope, tablesOf, type ChContext } from "../context";
import { fromCalls } from "../conditions";
import { hasCallFilters } from "./recordings";

/**
 * Clients and platforms, counted as the in-memory engine counts them (lib/analytics/
 * clients.ts), from the join deliveries the forwarder copied into ClickHouse's
 * `webhook_deliveries` (their bodies as received). The bodies are parsed here, not by
 * ClickHouse: 18.16 has no JSONExtract, and its visitParam functions read a field at any
 * depth and assume a body without whitespace — a body as received may have both.
 * Deliveries are sharded by their idempotency key, not their call: call filters are a
 * GLOBAL IN over the matching calls.
 */
export async function getClients(ctx: ChContext, f: Filters, scope: Scope, signal?: AbortSignal): Promise<ClientRow[]> {
  const apps = appScope(ctx, f, scope);
  const counter = new ClientCounter(f);
  if (apps.pks.length > 0) {
    const t = tablesOf(ctx.ch);
    const calls = hasCallFilters(f)
      ? sql`session_id IS NOT NULL AND (app_pk, assumeNotNull(session_id)) GLOBAL IN (SELECT app_pk, session_id ${fromCalls(t, { ...f, from: undefined, to: undefined }, apps.pks)})`
      : undefined;
    const query = sql`SELECT app_pk AS appPk, ifNull(session_id, '') AS sessionId, received_ms AS receivedMs, body FROM ${t.deliveries} FINAL
      WHERE ${and([sql`app_pk IN ${apps.pks}`, sql`trigger IN ${JOIN_TRIGGERS}`, calls])}`.text;
    for await (const r of ctx.ch.stream<{ appPk: number; sessionId: string; receivedMs: number; body: string }>(query, signal)) {
      counter.add(joinFactsOfBody(r.appPk, r.sessionId, r.receivedMs, r.body));
    }
  }
  return counter.rows(apps.appId);
}
