/**
 * Read side of the alerts for the dashboard: transitions with the values that caused
 * them (and, for admins, how their notification fared), and the header's firing count.
 * Everything is limited to the rules the caller may see (lib/alerts/rules.ts).
 */
import { desc, inArray } from "drizzle-orm";
import type { Db } from "@/db/client";
import { tablesOf } from "@/db/state";
import type { Caller } from "@/lib/auth/authorize";
import { getRuleRecord, listRuleRecords } from "./rules";
import type { AlertState } from "./schema";

export interface NotificationStatus {
  status: "pending" | "delivered" | "failed";
  attempts: number;
  lastAttemptMs: number | null;
  lastStatus: number | null;
  lastError: string | null;
  nextAttemptMs: number | null;
  deliveredMs: number | null;
}

export interface AlertEventView {
  id: string;
  ruleId: number;
  ruleName: string;
  fromState: AlertState;
  toState: AlertState;
  atMs: number;
  window: { from: number; to: number };
  value: number;
  previousValue: number | null;
  threshold: number;
  calls: number;
  /** Admins only; null for viewers and for rules without a destination. */
  notification: NotificationStatus | null;
}

export interface HistoryParams {
  ruleId?: number;
  /** Only the rules that concern one of these apps (see listRuleRecords). */
  appIds?: readonly string[];
  /** Default 50, at most 500. */
  limit?: number;
}

/** Transitions, newest first. */
export async function listHistory(db: Db, caller: Caller, params: HistoryParams = {}): Promise<AlertEventView[]> {
  const { alertEvents, alertOutbox } = tablesOf(db);
  const rules = params.ruleId === undefined ? await listRuleRecords(db, caller, params.appIds) : [await getRuleRecord(db, caller, params.ruleId)];
  if (rules.length === 0) return [];
  const names = new Map(rules.map((r) => [r.id, r.name]));
  const limit = Math.max(1, Math.min(500, Math.floor(params.limit ?? 50)));
  const events = await db
    .select()
    .from(alertEvents)
    .where(inArray(alertEvents.rulePk, [...names.keys()]))
    .orderBy(desc(alertEvents.pk))
    .limit(limit);
  const outbox = new Map<string, NotificationStatus>();
  if (caller.role === "admin" && events.length > 0) {
    for (const o of await db.select().from(alertOutbox).where(inArray(alertOutbox.eventId, events.map((e) => e.eventId)))) {
      outbox.set(o.eventId, {
        status: o.status, attempts: o.attempts, lastAttemptMs: o.lastAttemptMs, lastStatus: o.lastStatus, lastError: o.lastError,
        nextAttemptMs: o.status === "pending" ? o.nextAttemptMs : null, deliveredMs: o.deliveredMs,
      });
    }
  }
  return events.map((e) => ({
    id: e.eventId, ruleId: e.rulePk, ruleName: names.get(e.rulePk) ?? "", fromState: e.fromState, toState: e.toState, atMs: e.atMs,
    window: { from: e.windowFrom, to: e.windowTo }, value: e.value, previousValue: e.previousValue, threshold: e.threshold, calls: e.calls,
    notification: outbox.get(e.eventId) ?? null,
  }));
}

/** Rules firing now that the caller may see (the header's badge). */
export async function firingCount(db: Db, caller: Caller, appIds?: readonly string[]): Promise<number> {
  return (await listRuleRecords(db, caller, appIds)).filter((r) => r.enabled && r.state === "firing").length;
}
