import { sql, type Sql } from "@/lib/clickhouse";
import type { Filters } from "@/lib/analytics/filters";
import { pageOf, type CombinedParticipantRow, type Page } from "@/lib/analytics/report-types";
import type { Scope } from "@/lib/analytics/scope";
import { appScope, type AppScope, type ChContext } from "../context";
import { minutes } from "./shared";
import { combinedPageCodesQuery, participantsOrder, participantsQuery, uidCountQuery, type ParticipantRaw } from "./usage";

/**
 * Participants across apps: each uid once, its per-app participants rows (usage.ts)
 * summed, the apps it is used in listed. Order as the in-memory engine's: by calls (most
 * first), or `sort=minutes` by total minutes then calls; then uid in bytes (both engines:
 * decision 0014 §10); `order=asc` the exact reverse.
 */

/** `uidCodes`: only these uids (one page's). */
function combinedQuery(ctx: ChContext, f: Filters, pks: readonly number[], uidCodes?: readonly string[]): Sql {
  return sql`SELECT uid, groupArray(appPk) AS appPks, sum(calls) AS calls, sum(joined) AS joined, sum(unanswered) AS unanswered,
      sum(audioX1000) AS audioX1000, sum(videoX1000) AS videoX1000, sum(totalX1000) AS totalX1000,
      min(firstCallAt) AS firstCallAt, max(lastCallAt) AS lastCallAt
    FROM (${participantsQuery(ctx, f, pks, uidCodes)}) GROUP BY uid`;
}

/** A uid's per-app rows summed (ParticipantRaw's sums), with the pks of its apps. */
type CombinedRaw = Omit<ParticipantRaw, "appPk"> & { appPks: number[] };

function toRow(r: CombinedRaw, apps: AppScope): CombinedParticipantRow {
  return {
    uid: r.uid, apps: r.appPks.map(apps.appId).sort(), calls: r.calls, joined: r.joined, unanswered: r.unanswered,
    audioMinutes: minutes(r.audioX1000), videoMinutes: minutes(r.videoX1000), totalMinutes: minutes(r.totalX1000),
    firstCallAt: r.firstCallAt, lastCallAt: r.lastCallAt,
  };
}

export async function getCombinedParticipantsPage(ctx: ChContext, f: Filters, scope: Scope, signal?: AbortSignal): Promise<Page<CombinedParticipantRow>> {
  const apps = appScope(ctx, f, scope);
  const offset = (f.page - 1) * f.perPage;
  // The page's uids chosen from signed sums (usage.ts combinedPageCodesQuery), then their full rows, in the same order.
  const [count, codes] = await Promise.all([
    ctx.ch.rows<{ n: number }>(uidCountQuery(ctx, f, apps.pks).text, signal),
    ctx.ch.rows<{ uidCode: string }>(combinedPageCodesQuery(ctx, f, apps.pks, offset, f.perPage).text, signal),
  ]);
  const rows = codes.length === 0
    ? []
    : await ctx.ch.rows<CombinedRaw>(sql`${combinedQuery(ctx, f, apps.pks, codes.map((c) => c.uidCode))} ${participantsOrder(f, ["uid"])}`.text, signal);
  return pageOf(rows.map((r) => toRow(r, apps)), count[0]?.n ?? 0, f);
}

/** Every uid across apps, in the report's order, streamed (the CSV). */
export function combinedParticipantRows(ctx: ChContext, f: Filters, scope: Scope, signal?: AbortSignal): AsyncIterable<CombinedParticipantRow> {
  const apps = appScope(ctx, f, scope);
  const query = sql`${combinedQuery(ctx, f, apps.pks)} ${participantsOrder(f, ["uid"])}`.text;
  return (async function* () {
    for await (const r of ctx.ch.stream<CombinedRaw>(query, signal)) yield toRow(r, apps);
  })();
}
