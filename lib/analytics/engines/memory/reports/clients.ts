import { sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { toEpochSeconds } from "@/lib/ingest/envelope";
import type { Filters } from "../../../filters";
import { CLIENT_DIMENSIONS, type ClientDimension, type ClientRow } from "../../../report-types";
import { resolveApps, visibleApps, type Scope } from "../../../scope";
import { hasCallFilters } from "./recordings";
import { and, appCondition, iterateRows, rawConditions } from "./sql";

/**
 * Clients and platforms: what each participant session joined with, from the
 * `initial_config` (platform, sdk, call_version, is_audio_only, is_video_muted) and the
 * occupant's `audio_call` of `call_participant_joined` / `meeting_participant_joined`,
 * read from the stored deliveries (SQLite JSON, so the raw retention bounds how far back
 * it reaches: 90 days by default). A session counts in the period of its own `joined_at`;
 * call filters keep the sessions of synced calls that match.
 */

const JOINS = ["call_participant_joined", "meeting_participant_joined"];

type Raw = {
  appPk: number; sessionId: string; joinedAt: unknown; receivedMs: number;
  platform: unknown; sdk: unknown; version: unknown; audioOnly: unknown; audioCall: unknown; videoMuted: unknown;
};

const text = (v: unknown): string | null => (typeof v === "string" && v.trim() !== "" ? v.trim().toLowerCase() : typeof v === "number" ? String(v) : null);
const flag = (v: unknown): boolean | null => (v === true || v === "true" || v === 1 || v === "1" ? true : v === false || v === "false" || v === 0 || v === "0" ? false : null);

/** The value of each dimension a join says (null: it does not say). */
function valuesOf(r: Raw): Record<ClientDimension, string> {
  const sdk = text(r.sdk);
  const version = text(r.version);
  const audioOnly = flag(r.audioOnly) ?? flag(r.audioCall);
  const muted = flag(r.videoMuted);
  return {
    platform: text(r.platform) ?? "unknown",
    sdk: sdk ? (version ? `${sdk} ${version}` : sdk) : "unknown",
    media: audioOnly === null ? "unknown" : audioOnly ? "audio only" : "video",
    videoMuted: muted === null ? "unknown" : muted ? "camera off" : "camera on",
  };
}

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
    WHERE ${and([appCondition("d.app_pk", appPks), sql`d.trigger IN (${sql.join(JOINS.map((t) => sql`${t}`), sql`, `)})`, callFilter])}`;
  // Per app and dimension: value → [participant sessions, distinct calls].
  const counts = new Map<string, { sessions: number; calls: Set<string> }>();
  const totals = new Map<string, number>();
  for (const r of iterateRows<Raw>(db, q)) {
    const at = toEpochSeconds(r.joinedAt) ?? Math.floor(r.receivedMs / 1000);
    if ((f.from !== undefined && at < f.from) || (f.to !== undefined && at >= f.to)) continue;
    const values = valuesOf(r);
    for (const dim of CLIENT_DIMENSIONS) {
      const key = `${r.appPk}\u0000${dim}\u0000${values[dim]}`;
      const hit = counts.get(key) ?? { sessions: 0, calls: new Set<string>() };
      hit.sessions++;
      hit.calls.add(r.sessionId);
      counts.set(key, hit);
      totals.set(`${r.appPk}\u0000${dim}`, (totals.get(`${r.appPk}\u0000${dim}`) ?? 0) + 1);
    }
  }
  const appIds = new Map(visibleApps(db, scope).map((a) => [a.pk, a.appId]));
  const rows: ClientRow[] = [];
  for (const [key, c] of counts) {
    const [appPk, dimension, value] = key.split("\u0000");
    const total = totals.get(`${appPk}\u0000${dimension}`) ?? 1;
    rows.push({ app: appIds.get(Number(appPk)) ?? appPk, dimension: dimension as ClientDimension, value, sessions: c.sessions, calls: c.calls.size, share: Math.round((c.sessions / total) * 1000) / 1000 });
  }
  const order = (d: string) => CLIENT_DIMENSIONS.indexOf(d as ClientDimension);
  return rows.sort((a, b) => a.app.localeCompare(b.app) || order(a.dimension) - order(b.dimension) || b.sessions - a.sessions || a.value.localeCompare(b.value));
}
