import { isObject, toEpochSeconds } from "@/lib/ingest/envelope";
import type { Filters } from "./filters";
import { CLIENT_DIMENSIONS, type ClientDimension, type ClientRow } from "./report-types";

/**
 * The clients report's counting, shared by both engines (each reads the join deliveries
 * from where it keeps them and hands them here): what each participant session joined
 * with, from the `initial_config` (platform, sdk, call_version, is_audio_only,
 * is_video_muted) and the occupant's `audio_call` of `call_participant_joined` /
 * `meeting_participant_joined`. A session counts in the period of its own `joined_at`
 * (else the second it was received).
 */

export const JOIN_TRIGGERS = ["call_participant_joined", "meeting_participant_joined"] as const;

/** One stored join delivery, its fields as SQLite's `json_extract` gives them (true/false as 1/0, objects as JSON text). */
export interface JoinFacts {
  appPk: number;
  sessionId: string;
  receivedMs: number;
  joinedAt: unknown;
  platform: unknown;
  sdk: unknown;
  version: unknown;
  audioOnly: unknown;
  audioCall: unknown;
  videoMuted: unknown;
}

/** A JSON value as SQLite's `json_extract` returns it: booleans as 1/0, objects and arrays as their JSON text. */
function extracted(v: unknown): unknown {
  if (v === true) return 1;
  if (v === false) return 0;
  if (v !== null && typeof v === "object") return JSON.stringify(v);
  return v ?? null;
}

/** A stored join body's facts, read as `json_extract(body, '$.data.…')` reads them (a body that is not JSON says nothing). */
export function joinFactsOfBody(appPk: number, sessionId: string, receivedMs: number, body: string): JoinFacts {
  let data: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(body) as unknown;
    if (isObject(parsed) && isObject(parsed.data)) data = parsed.data;
  } catch {
    // stored as received; nothing to read
  }
  const occupant = isObject(data.occupant) ? data.occupant : {};
  const config = isObject(data.initial_config) ? data.initial_config : {};
  return {
    appPk, sessionId, receivedMs,
    joinedAt: extracted(occupant.joined_at),
    platform: extracted(config.platform),
    sdk: extracted(config.sdk),
    version: extracted(config.call_version),
    audioOnly: extracted(config.is_audio_only),
    audioCall: extracted(occupant.audio_call),
    videoMuted: extracted(config.is_video_muted),
  };
}

const text = (v: unknown): string | null => (typeof v === "string" && v.trim() !== "" ? v.trim().toLowerCase() : typeof v === "number" ? String(v) : null);
const flag = (v: unknown): boolean | null => (v === true || v === "true" || v === 1 || v === "1" ? true : v === false || v === "false" || v === 0 || v === "0" ? false : null);

/** The value of each dimension a join says (`unknown`: it does not say). */
function valuesOf(r: JoinFacts): Record<ClientDimension, string> {
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

/** Counts per app and dimension: value → participant sessions and distinct calls. */
export class ClientCounter {
  private readonly counts = new Map<string, { sessions: number; calls: Set<string> }>();
  private readonly totals = new Map<string, number>();

  constructor(private readonly f: Pick<Filters, "from" | "to">) {}

  /** Counts one join when its time is in the filters' period. */
  add(r: JoinFacts): void {
    const at = toEpochSeconds(r.joinedAt) ?? Math.floor(r.receivedMs / 1000);
    if ((this.f.from !== undefined && at < this.f.from) || (this.f.to !== undefined && at >= this.f.to)) return;
    const values = valuesOf(r);
    for (const dim of CLIENT_DIMENSIONS) {
      const key = `${r.appPk}\u0000${dim}\u0000${values[dim]}`;
      const hit = this.counts.get(key) ?? { sessions: 0, calls: new Set<string>() };
      hit.sessions++;
      hit.calls.add(r.sessionId);
      this.counts.set(key, hit);
      this.totals.set(`${r.appPk}\u0000${dim}`, (this.totals.get(`${r.appPk}\u0000${dim}`) ?? 0) + 1);
    }
  }

  /** The report's rows: by app, dimension (CLIENT_DIMENSIONS' order), most sessions, value. */
  rows(appId: (pk: number) => string): ClientRow[] {
    const rows: ClientRow[] = [];
    for (const [key, c] of this.counts) {
      const [appPk, dimension, value] = key.split("\u0000");
      const total = this.totals.get(`${appPk}\u0000${dimension}`) ?? 1;
      rows.push({ app: appId(Number(appPk)), dimension: dimension as ClientDimension, value, sessions: c.sessions, calls: c.calls.size, share: Math.round((c.sessions / total) * 1000) / 1000 });
    }
    const order = (d: string) => CLIENT_DIMENSIONS.indexOf(d as ClientDimension);
    return rows.sort((a, b) => a.app.localeCompare(b.app) || order(a.dimension) - order(b.dimension) || b.sessions - a.sessions || a.value.localeCompare(b.value));
  }
}
