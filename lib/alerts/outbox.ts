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
import { and, asc, eq, inArray, lte } from "drizzle-orm";
import type { Db } from "@/db/client";
import type { AlertOutboxRow } from "@/db/schema";
import { tablesOf } from "@/db/state";
import { logger } from "@/lib/log/logger";
import { RequestGate } from "@/lib/platform/rate-limit";
import { checkDestinationUrl, guardedLookup, systemResolver, type Resolver } from "./destination";
import { destinationOf } from "./rules";
import { signatureHeaders } from "./signing";

/** Waits after the 1st, 2nd, … failed attempt; the last one repeats until a day has passed. */
export const RETRY_DELAYS_MS = [5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 28_800_000];
export const GIVE_UP_AFTER_MS = 86_400_000;
/** An attempt's total deadline: connecting, sending and the answer's head, however slowly the destination trickles them. */
const ATTEMPT_TIMEOUT_MS = 10_000;
/** How long a claimed message is held: longer than an attempt can take. */
const LEASE_MS = 60_000;
/**
 * Destinations sent to at once by this process. Each destination gets one message at a
 * time (in order), and different destinations do not wait for each other: a slow or
 * dead one holds only its own messages, for at most ATTEMPT_TIMEOUT_MS each.
 */
export const DELIVERY_CONCURRENCY = 4;

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
  const limitMs = options.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
  return new Promise((resolve) => {
    let settled = false;
    const settle = (result: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve(result);
    };
    const req = send(
      url,
      {
        method: "POST",
        headers: { ...headers, "content-type": "application/json", "content-length": String(Buffer.byteLength(body)), "user-agent": "Callboard-Alerts/1" },
        lookup: guardedLookup(options.allowPrivate, options.resolver ?? systemResolver),
        timeout: limitMs,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const ok = status >= 200 && status < 300;
        // The status is the answer. Its body is never read: a destination that trickles one
        // byte every few seconds held a delivery (and every rule behind it) for minutes.
        res.destroy();
        settle({ ok, status, error: ok ? null : `the destination answered ${status}` });
      },
    );
    // A total deadline: the socket's idle timeout alone never fires on a trickle.
    const deadline = setTimeout(() => req.destroy(new Error(`no answer within ${limitMs / 1000} s`)), limitMs);
    req.on("timeout", () => req.destroy(new Error(`no answer within ${limitMs / 1000} s`)));
    req.on("error", (err: NodeJS.ErrnoException) => {
      const refused = err.code === "EREFUSED_DESTINATION";
      settle({ ok: false, status: null, error: `${refused ? "destination refused: " : ""}${err.message}`.slice(0, 500) });
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
async function claim(db: Db, row: AlertOutboxRow, nowMs: number): Promise<boolean> {
  const { alertOutbox } = tablesOf(db);
  // Compare-and-set on the attempt time: of two servers claiming one message, one wins.
  const won = await db
    .update(alertOutbox)
    .set({ nextAttemptMs: nowMs + LEASE_MS })
    .where(and(eq(alertOutbox.pk, row.pk), eq(alertOutbox.status, "pending"), eq(alertOutbox.nextAttemptMs, row.nextAttemptMs)))
    .returning({ pk: alertOutbox.pk });
  return won.length === 1;
}

async function attempt(db: Db, row: AlertOutboxRow, options: DeliverOptions): Promise<SendResult> {
  const { alertRules } = tablesOf(db);
  const [rule] = await db.select().from(alertRules).where(eq(alertRules.pk, row.rulePk));
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

/** The destination each rule sends to (its URL), the key its messages are queued under. */
async function destinationKeys(db: Db, rulePks: number[]): Promise<Map<number, string>> {
  const keys = new Map<number, string>();
  if (rulePks.length === 0) return keys;
  const { alertRules } = tablesOf(db);
  for (const rule of await db.select().from(alertRules).where(inArray(alertRules.pk, rulePks))) {
    try {
      keys.set(rule.pk, destinationOf(rule)?.url ?? `rule:${rule.pk}`);
    } catch {
      keys.set(rule.pk, `rule:${rule.pk}`);
    }
  }
  return keys;
}

async function deliverOne(db: Db, row: AlertOutboxRow, options: DeliverOptions): Promise<DeliveryOutcome | null> {
  const claimedMs = options.nowMs ?? Date.now();
  if (!(await claim(db, row, claimedMs))) return null;
  const result = await attempt(db, row, options);
  const nowMs = options.nowMs ?? Date.now();
  const attempts = row.attempts + 1;
  const next = result.ok || result.final ? null : nextAttemptAt(row.createdMs, attempts, nowMs);
  const status = result.ok ? "delivered" : next === null ? "failed" : "pending";
  const { alertOutbox } = tablesOf(db);
  await db
    .update(alertOutbox)
    .set({
      status, attempts, lastAttemptMs: nowMs, lastStatus: result.status, lastError: result.error,
      nextAttemptMs: next ?? nowMs, deliveredMs: result.ok ? nowMs : null,
    })
    .where(eq(alertOutbox.pk, row.pk));
  if (!result.ok) logger.warn({ event: row.eventId, attempts, error: result.error, gaveUp: status === "failed" }, "alert notification not delivered");
  return { eventId: row.eventId, status, attempts, httpStatus: result.status, error: result.error };
}

/** Destinations a delivery of this process is sending to now; a later pass leaves their messages to it. */
const busyDestinations = new Set<string>();
const deliverySlots = new RequestGate(DELIVERY_CONCURRENCY);

/**
 * Sends every due message once; returns what became of each. Messages are grouped by
 * destination: one group at a time per destination, up to DELIVERY_CONCURRENCY groups at
 * once. Passes may overlap (the scheduler starts one each tick without waiting): a
 * destination already being sent to is skipped, and a message is claimed (leased) just
 * before it is sent, so none goes out twice.
 */
export async function deliverDue(db: Db, options: DeliverOptions = {}): Promise<DeliveryOutcome[]> {
  const nowMs = options.nowMs ?? Date.now();
  const { alertOutbox } = tablesOf(db);
  const due = await db
    .select()
    .from(alertOutbox)
    .where(and(eq(alertOutbox.status, "pending"), lte(alertOutbox.nextAttemptMs, nowMs)))
    .orderBy(asc(alertOutbox.nextAttemptMs))
    .limit(options.limit ?? 50);
  const keys = await destinationKeys(db, [...new Set(due.map((r) => r.rulePk))]);
  const groups = new Map<string, AlertOutboxRow[]>();
  for (const row of due) {
    const key = keys.get(row.rulePk) ?? `rule:${row.rulePk}`;
    groups.set(key, [...(groups.get(key) ?? []), row]);
  }
  const outcomes: DeliveryOutcome[] = [];
  await Promise.all(
    [...groups].map(async ([key, rows]) => {
      if (busyDestinations.has(key)) return;
      busyDestinations.add(key);
      const release = await deliverySlots.acquire();
      try {
        for (const row of rows) {
          const outcome = await deliverOne(db, row, options);
          if (outcome) outcomes.push(outcome);
        }
      } finally {
        release();
        busyDestinations.delete(key);
      }
    }),
  );
  return outcomes;
}
