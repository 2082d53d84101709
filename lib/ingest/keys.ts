import { createHash } from "node:crypto";
import type { Envelope, LiveEvent, RecordingEvent } from "./envelope";

/**
 * Idempotency keys. The platform documents no event id and warns that deliveries can
 * repeat, so a key is built from the fields that identify one event of each trigger:
 *
 * - recording_generated: webhook + trigger + sessionId + startTime
 * - call_ended / meeting_ended: webhook + trigger + sessionId + destroyed_at
 * - other call and meeting triggers: webhook + trigger + sessionId + occupant + times
 * - anything else: a hash of the canonical body (keys sorted), so byte-different but
 *   equal JSON (key order, spacing) is still one event.
 *
 * Times are normalised to epoch seconds first, so "1700000000" and 1700000000000 match.
 */
const MAX_READABLE = 300;

const sha256 = (s: string) => createHash("sha256").update(s).digest("base64url");

function fromParts(trigger: string, parts: Array<string | number | null>): string {
  const readable = `${trigger}:${JSON.stringify(parts)}`;
  return readable.length <= MAX_READABLE ? readable : `${trigger}:h:${sha256(readable)}`;
}

/** JSON with object keys sorted at every level (hot path: plain loops, no intermediate arrays). */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== "object") return JSON.stringify(v) ?? "null";
  if (Array.isArray(v)) {
    let out = "[";
    for (let i = 0; i < v.length; i++) out += (i ? "," : "") + canonicalJson(v[i]);
    return `${out}]`;
  }
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o).sort();
  let out = "{";
  let first = true;
  for (const k of keys) {
    const val = o[k];
    if (val === undefined) continue;
    out += (first ? "" : ",") + JSON.stringify(k) + ":" + canonicalJson(val);
    first = false;
  }
  return `${out}}`;
}

export function recordingKey(env: Envelope, rec: RecordingEvent): string {
  return fromParts(env.trigger, [env.webhook, rec.sessionId, rec.startTime]);
}

export function liveKey(env: Envelope, ev: LiveEvent): string {
  if (ev.step === "ended") return fromParts(env.trigger, [env.webhook, ev.sessionId, ev.endedAt]);
  if (ev.step === "initiated") return fromParts(env.trigger, [env.webhook, ev.sessionId, ev.initiatedAt]);
  const occ = ev.occupants[0];
  return fromParts(env.trigger, [env.webhook, ev.sessionId, occ?.name ?? null, occ?.joinedAt ?? null, occ?.leftAt ?? null, ev.startedAt]);
}

export function bodyKey(parsed: unknown): string {
  const e = parsed as { trigger?: unknown };
  return `${typeof e.trigger === "string" ? e.trigger : "?"}:b:${sha256(canonicalJson(parsed))}`;
}
