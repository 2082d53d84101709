// Webhook sender: builds realistic delivery sequences (with the repeats and disorder a
// consumer must survive) and POSTs them like the platform does.
import { hashString, mix, mulberry32 } from "./prng";
import type { CallRecord, Region } from "./types";
import { callLifecycle, type CallEventOptions } from "./webhook-call-events";
import { CHAT_TRIGGERS, chatEvent } from "./webhook-chat-events";
import type { Delivery } from "./webhook-types";

export * from "./webhook-types";
export * from "./webhook-call-events";
export * from "./webhook-chat-events";

export interface SequenceOptions {
  appId: string;
  region: Region;
  /** Webhook identifier in every envelope (default "wh-callboard"). */
  webhook?: string;
  seed?: number;
  /** Probability that a delivery is sent a second time (same body). */
  repeatRate?: number;
  /** Probability that a call's sequence is disordered (its end delivered at its start). */
  outOfOrderRate?: number;
  /** Force all call time fields to milliseconds (true) or seconds (false). */
  millis?: boolean;
  nameOf?: (uid: string) => string;
  /** Also add one delivery of every chat trigger, spread over the calls' time range. */
  includeChat?: boolean;
}

/** All deliveries for a set of calls, merged into one stream ordered by event time. */
export function buildDeliveries(calls: readonly CallRecord[], o: SequenceOptions): Delivery[] {
  const ctx = { appId: o.appId, region: o.region, webhook: o.webhook ?? "wh-callboard" };
  const rng = mulberry32(mix(o.seed ?? 1, hashString(o.appId), 0x3eb));
  const eo: CallEventOptions = { ctx, nameOf: o.nameOf, millis: o.millis };
  const all: Delivery[] = [];
  for (const call of calls) {
    const seq = callLifecycle(call, eo);
    const started = seq.findIndex((d) => d.trigger.endsWith("_started"));
    const ended = seq.findIndex((d) => d.trigger.endsWith("_ended"));
    if (started >= 0 && ended > started && rng() < (o.outOfOrderRate ?? 0)) {
      // The end overtakes the start: delivered just before call_started.
      seq[ended] = { ...seq[ended], at: seq[started].at - 0.5 };
    }
    all.push(...seq);
  }
  if (o.includeChat && calls.length > 0) {
    const users = [...new Set(calls.flatMap((c) => c.participants.map((p) => p.uid)))];
    while (users.length < 3) users.push(`user-${users.length + 1}`);
    const times = calls.map((c) => c.initiatedAt);
    const lo = Math.min(...times);
    const hi = Math.max(...times);
    CHAT_TRIGGERS.forEach((t, i) => all.push(chatEvent(t, { ctx, at: Math.floor(lo + ((hi - lo) * (i + 1)) / (CHAT_TRIGGERS.length + 1)), users, seed: o.seed })));
  }
  const withRepeats: Delivery[] = [];
  for (const d of all) {
    withRepeats.push(d);
    if (rng() < (o.repeatRate ?? 0)) withRepeats.push({ ...d, body: structuredClone(d.body), at: d.at + 1 + Math.floor(rng() * 60), repeat: true });
  }
  return withRepeats.sort((a, b) => a.at - b.at);
}

export interface SendOptions {
  concurrency?: number;
  basicAuth?: { username: string; password: string };
  /** Per-request time-out (default 10 s). */
  timeoutMs?: number;
  headers?: Record<string, string>;
}

export interface SendResult {
  index: number;
  trigger: string;
  /** HTTP status, or 0 when the request failed (error set). */
  status: number;
  error?: string;
}

export interface SendReport {
  sent: number;
  ok: number;
  failed: number;
  byStatus: Record<string, number>;
  results: SendResult[];
}

/** POSTs each delivery body as JSON. Deliveries go out in order; with concurrency > 1 up
 * to that many are in flight at once, as the platform's workers would do. */
export async function sendDeliveries(url: string, deliveries: readonly Delivery[], o: SendOptions = {}): Promise<SendReport> {
  const headers: Record<string, string> = { "content-type": "application/json", ...o.headers };
  if (o.basicAuth) headers.authorization = `Basic ${Buffer.from(`${o.basicAuth.username}:${o.basicAuth.password}`).toString("base64")}`;
  const results: SendResult[] = new Array<SendResult>(deliveries.length);
  let next = 0;
  const worker = async () => {
    while (next < deliveries.length) {
      const index = next++;
      const d = deliveries[index];
      try {
        const res = await fetch(url, { method: "POST", headers, body: JSON.stringify(d.body), signal: AbortSignal.timeout(o.timeoutMs ?? 10_000) });
        await res.arrayBuffer();
        results[index] = { index, trigger: d.trigger, status: res.status };
      } catch (e) {
        results[index] = { index, trigger: d.trigger, status: 0, error: e instanceof Error ? e.message : String(e) };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(o.concurrency ?? 4, deliveries.length || 1)) }, worker));
  const byStatus: Record<string, number> = {};
  for (const r of results) byStatus[String(r.status)] = (byStatus[String(r.status)] ?? 0) + 1;
  const ok = results.filter((r) => r.status >= 200 && r.status < 300).length;
  return { sent: results.length, ok, failed: results.length - ok, byStatus, results };
}
