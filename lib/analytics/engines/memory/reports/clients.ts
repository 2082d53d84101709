import { sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { ClientCounter, JOIN_TRIGGERS, type JoinFacts } from "../../../clients";
import type { Filters } from "../../../filters";
import type { ClientRow } from "../../../report-types";
import { resolveApps, visibleApps, type Scope } from "../../../scope";
import { hasCallFilters } from "./recordings";
import { and, appCondition, iterateRows, rawConditions } from "./sql";

/**
 * Clients and platforms (lib/analytics/clients.ts counts them), read from the stored
 * join deliveries (SQLite JSON, so the raw retention bounds how far back it reaches: 90
 * days by default). Call filters keep the sessions of synced calls that match.
 */
export function getClients(db: Db, f: Filters, scope: Scope): ClientRow[] {
  const appPks = resolveApps(db, f, scope);
  const callFilter = hasCallFilters(f) ? sql`c.pk IS NOT NULL AND ${and(rawConditions(f, appPks))}` : undefined;
  const q = sql`SELECT d.app_pk AS appPk, d.session_id AS sessionId, d.received_ms AS receivedMs,
      json_extract(d.body, '$.data.occupant.joined_at') AS joinedAt,
      json_extract(d.body, '$.data.initial_config.platform') AS platform,
      json_extract(d.body, '$.data.initial_config.sdk') AS sdk,
      json_extract(d.body, '$.data.initial_config.call_version') AS version,
      json_extract(d.body, '$.data.initial_config.is_audio_only') AS audioOnly,
      json_extract(d.body, '$.data.occupant.audio_call') AS audioCall,
      json_extract(d.body, '$.data.initial_config.is_video_muted') AS videoMuted
    FROM webhook_deliveries d ${callFilter ? sql`LEFT JOIN calls c ON c.app_pk = d.app_pk AND c.session_id = d.session_id` : sql``}
    WHERE ${and([appCondition("d.app_pk", appPks), sql`d.trigger IN (${sql.join(JOIN_TRIGGERS.map((t) => sql`${t}`), sql`, `)})`, callFilter])}`;
  const counter = new ClientCounter(f);
  for (const r of iterateRows<JoinFacts>(db, q)) counter.add(r);
  const appIds = new Map(visibleApps(db, scope).map((a) => [a.pk, a.appId]));
  return counter.rows((pk) => appIds.get(pk) ?? String(pk));
}
