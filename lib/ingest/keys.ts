import { createHash } from "node:crypto";
import { eventTime, type Envelope, type LiveEvent, type RecordingEvent } from "../platform/webhook-envelope";

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
 *
 * Every key starts with the event's own time, taken from the body (so a repeat has the
 * same key). Events arrive roughly in time order, so new keys land at the right edge of
 * the unique index instead of on a random page: with hash-led keys each delivery
 * dirtied a page of its own, and the index cost 3-4x the rest of the insert.
 */
const MAX_READABLE = 300;

const sha256 = (s: string) => createHash("sha256").update(s).digest("base64url");

/** Ten digits of epoch seconds (sorts as text until 2286), or "~" when the event has no time. */
const timePrefix = (t: number | null | undefined) => (t === null || t === undefined ? "~" : String(t).padStart(10, "0"));

function fromParts(time: number | null | undefined, trigger: string, parts: Array<string | number | null>): string {
  const readable = `${timePrefix(time)}|${trigger}|${JSON.stringify(parts)}`;
  return readable.length <= MAX_READABLE ? readable : `${timePrefix(time)}|${trigger}|h:${sha256(readable)}`;
}

/** A container being written by `canonicalJson`: an array, or an object with its keys sorted. */
interface Frame {
  array: unknown[] | null;
  object: Record<string, unknown> | null;
  keys: string[];
  next: number;
  wrote: boolean;
}

/**
 * JSON with object keys sorted at every level. A loop over an explicit stack, never
 * recursion: the body is untrusted (the ingest also refuses anything nested deeper
 * than MAX_JSON_DEPTH before it gets here). Its output is exactly what the recursive
 * version wrote, so keys stored before still match their repeats.
 */
export function canonicalJson(root: unknown): string {
  let out = "";
  const stack: Frame[] = [];
  let value = root;
  for (;;) {
    if (value === null || typeof value !== "object") {
      out += JSON.stringify(value) ?? "null";
    } else if (Array.isArray(value)) {
      out += "[";
      stack.push({ array: value, object: null, keys: [], next: 0, wrote: false });
    } else {
      const object = value as Record<string, unknown>;
      out += "{";
      stack.push({ array: null, object, keys: Object.keys(object).sort(), next: 0, wrote: false });
    }
    // The next value to write, closing every container that has none left.
    for (;;) {
      const top = stack.at(-1);
      if (!top) return out;
      if (top.array) {
        if (top.next < top.array.length) {
          if (top.next > 0) out += ",";
          value = top.array[top.next++];
          break;
        }
        out += "]";
      } else {
        const object = top.object!;
        while (top.next < top.keys.length && object[top.keys[top.next]] === undefined) top.next++;
        if (top.next < top.keys.length) {
          const key = top.keys[top.next++];
          out += (top.wrote ? "," : "") + JSON.stringify(key) + ":";
          top.wrote = true;
          value = object[key];
          break;
        }
        out += "}";
      }
      stack.pop();
    }
  }
}

export function recordingKey(env: Envelope, rec: RecordingEvent): string {
  return fromParts(rec.startTime, env.trigger, [env.webhook, rec.sessionId, rec.startTime]);
}

export function liveKey(env: Envelope, ev: LiveEvent): string {
  if (ev.step === "ended") return fromParts(ev.endedAt, env.trigger, [env.webhook, ev.sessionId, ev.endedAt]);
  if (ev.step === "initiated") return fromParts(ev.initiatedAt, env.trigger, [env.webhook, ev.sessionId, ev.initiatedAt]);
  const occ = ev.occupants[0];
  const time = occ?.leftAt ?? occ?.joinedAt ?? ev.startedAt;
  return fromParts(time, env.trigger, [env.webhook, ev.sessionId, occ?.name ?? null, occ?.joinedAt ?? null, occ?.leftAt ?? null, ev.startedAt]);
}

/** Any other trigger: its time (when the body has one) and the hash of its canonical body. */
export function bodyKey(env: Envelope, parsed: unknown): string {
  return `${timePrefix(eventTime(env.trigger, env.data))}|${env.trigger}|b:${sha256(canonicalJson(parsed))}`;
}
