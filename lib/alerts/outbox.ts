/**
 * Delivery of alert notifications from the durable outbox (alert_outbox): each due
 * message is claimed with a lease (so two dispatchers never send it at once), signed the
 * Standard Webhooks way, POSTed to the rule's destination through the SSRF guard, and
 * then marked delivered or given its next attempt. Retries back off for a day; after
 * that the message is marked failed. A message in flight when the process dies is sent
 * again after its lease: receivers dedupe on `webhook-id`, the event id.
 */
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { and, asc, eq, lte } from "drizzle-orm";
import type { Db } from "@/db/client";
import { alertOutbox, alertRules, type AlertOutboxRow } from "@/db/schema";
import { logger } from "@/lib/log/logger";
import { checkDestinationUrl, guardedLookup, systemResolver, type Resolver } from "./destination";
import { destinationOf } from "./rules";
import { signatureHeaders } from "./signing";

/** Waits after the 1st, 2nd, … failed attempt; the last one repeats until a day has passed. */
export const RETRY_DELAYS_MS = [5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 28_800_000];
export const GIVE_UP_AFTER_MS = 86_400_000;
const ATTEMPT_TIMEOUT_MS = 10_000;
/** How long a claimed message is held: longer than an attempt can take. */
const LEASE_MS = 60_000;

/** When to try again after `attempts` failures, or null when the day is over. The deadline itself gets one last try. */
export function nextAttemptAt(createdMs: number, attempts: number, nowMs: number): number | null {
  const deadline = createdMs + GIVE_UP_AFTER_MS;
  if (nowMs >= deadline) return null;
  const delay = RETRY_DELAYS_MS[Math.min(Math.max(attempts, 1), RETRY_DELAYS_MS.length) - 1];
  return Math.min(nowMs + delay, deadline);
}

export interface SendResult {
  ok: boolean;
  status: number | null;
  error: string | null;
  /** No retry can help (the rule lost its destination): give up at once. */
  final?: boolean;
}

export interface SendOptions {
  allowPrivate: boolean;
  resolver?: Resolver;
  timeoutMs?: number;
}

/** One POST, no redirects followed (a 3xx is a failure: the destination must be the URL the admin gave). */
export function postJson(rawUrl: string, headers: Record<string, string>, body: string, options: SendOptions): Promise<SendResult> {
  let url: URL;
  try {
    url = checkDestinationUrl(rawUrl, options.allowPrivate);
  } catch (err) {
    return Promise.resolve({ ok: false, status: null, error: `destination refused: ${(err as Error).message}` });
  }
  const send = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const req = send(
      url,
      {
        method: "POST",
        headers: { ...headers, "content-type": "application/json", "content-length": String(Buffer.byteLength(body)), "user-agent": "Callboard-Alerts/1" },
        lookup: guardedLookup(options.allowPrivate, options.resolver ?? systemResolver),
        timeout: options.timeoutMs ?? ATTEMPT_TIMEOUT_MS,
      },
      (res) => {
        res.resume(); // the answer's body is not needed
        const status = res.statusCode ?? 0;
        const ok = status >= 200 && status < 300;
        res.on("end", () => resolve({ ok, status, error: ok ? null : `the destination answered ${status}` }));
        res.on("error", () => resolve({ ok, status, error: ok ? null : `the destination answered ${status}` }));
      },
    );
    req.on("timeout", () => req.destroy(new Error(`no answer within ${(options.timeoutMs ?? ATTEMPT_TIMEOUT_MS) / 1000} s`)));
    req.on("error", (err: NodeJS.ErrnoException) => {
      const refused = err.code === "EREFUSED_DESTINATION";
      resolve({ ok: false, status: null, error: `${refused ? "destination refused: " : ""}${err.message}`.slice(0, 500) });
    });
    req.end(body);
  });
}

export interface DeliverOptions {
  nowMs?: number;
  resolver?: Resolver;
  /** At most this many messages per call (default 50). */
  limit?: number;
  timeoutMs?: number;
}

export interface DeliveryOutcome {
  eventId: string;
  status: "delivered" | "pending" | "failed";
  attempts: number;
  httpStatus: number | null;
  error: string | null;
}

/** Claims a due message for this dispatcher; false when another one got it first. */
function claim(db: Db, row: AlertOutboxRow, nowMs: number): boolean {
  const r = db
    .update(alertOutbox)
    .set({ nextAttemptMs: nowMs + LEASE_MS })
    .where(and(eq(alertOutbox.pk, row.pk), eq(alertOutbox.status, "pending"), eq(alertOutbox.nextAttemptMs, row.nextAttemptMs)))
    .run();
  return r.changes === 1;
}

async function attempt(db: Db, row: AlertOutboxRow, options: DeliverOptions): Promise<SendResult> {
  const rule = db.select().from(alertRules).where(eq(alertRules.pk, row.rulePk)).get();
  let destination;
  try {
    destination = rule ? destinationOf(rule) : null;
  } catch (err) {
    return { ok: false, status: null, error: (err as Error).message };
  }
  if (!destination) return { ok: false, status: null, error: "the rule has no destination any more", final: true };
  // Signed at each attempt: the timestamp is the time of sending, as receivers check it.
  const headers = signatureHeaders(destination.secret, row.eventId, row.body, Date.now());
  return postJson(destination.url, headers, row.body, { allowPrivate: destination.allowPrivate, resolver: options.resolver, timeoutMs: options.timeoutMs });
}

/** Sends every due message once; returns what became of each. */
export async function deliverDue(db: Db, options: DeliverOptions = {}): Promise<DeliveryOutcome[]> {
  const nowMs = options.nowMs ?? Date.now();
  const due = db
    .select()
    .from(alertOutbox)
    .where(and(eq(alertOutbox.status, "pending"), lte(alertOutbox.nextAttemptMs, nowMs)))
    .orderBy(asc(alertOutbox.nextAttemptMs))
    .limit(options.limit ?? 50)
    .all();
  const outcomes: DeliveryOutcome[] = [];
  for (const row of due) {
    if (!claim(db, row, nowMs)) continue;
    const result = await attempt(db, row, options);
    const attempts = row.attempts + 1;
    const next = result.ok || result.final ? null : nextAttemptAt(row.createdMs, attempts, nowMs);
    const status = result.ok ? "delivered" : next === null ? "failed" : "pending";
    db.update(alertOutbox)
      .set({
        status, attempts, lastAttemptMs: nowMs, lastStatus: result.status, lastError: result.error,
        nextAttemptMs: next ?? nowMs, deliveredMs: result.ok ? nowMs : null,
      })
      .where(eq(alertOutbox.pk, row.pk))
      .run();
    if (!result.ok) logger.warn({ event: row.eventId, attempts, error: result.error, gaveUp: status === "failed" }, "alert notification not delivered");
    outcomes.push({ eventId: row.eventId, status, attempts, httpStatus: result.status, error: result.error });
  }
  return outcomes;
}
