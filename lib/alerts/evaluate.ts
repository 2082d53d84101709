/**
 * Evaluation: each enabled rule, once per window. Windows are aligned to UTC multiples
 * of the rule's length and a window is evaluated once it has been closed for
 * `delaySeconds` (so late syncs and webhooks are in). The end of the last window
 * evaluated is stored on the rule, in the same transaction as the transition and its
 * notification: a restart, a second evaluator or "evaluate now" can neither skip nor
 * repeat a window, and a notification is enqueued exactly once.
 * See docs/decisions/0013-alerts.md.
 */
import { eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { serializeWithin, stateTransaction, tablesOf } from "@/db/state";
import { analyticsEngine, type AnalyticsEngine } from "@/lib/analytics/engine";
import { env } from "@/lib/config/env";
import { logger } from "@/lib/log/logger";
import { measure, type Measurement, type WindowRange } from "./metrics";
import { buildNotification } from "./payload";
import { decodeRule, type RuleRecord } from "./rules";
import type { AlertCondition, AlertState } from "./schema";

export interface EvaluateOptions {
  nowMs?: number;
  /** Seconds a window stays closed before it is evaluated (default ALERTS_DELAY_SECONDS). */
  delaySeconds?: number;
  engine?: AnalyticsEngine;
  /** Base of the dashboard links in notifications (default CALLBOARD_PUBLIC_URL, else localhost:PORT). */
  baseUrl?: string;
  /** Only this rule. */
  ruleId?: number;
}

export interface EvaluationResult {
  ruleId: number;
  window: WindowRange;
  /** `skipped`: the rule changed or was evaluated by someone else meanwhile; nothing recorded. */
  outcome: "fired" | "resolved" | "unchanged" | "no_verdict" | "skipped";
  state: AlertState;
  value: number | null;
  calls: number | null;
  note: string | null;
}

/** The latest window that has been closed for `delaySeconds` at `nowMs`. */
export function lastClosedWindow(nowMs: number, windowSeconds: number, delaySeconds: number): WindowRange {
  const to = Math.floor((Math.floor(nowMs / 1000) - delaySeconds) / windowSeconds) * windowSeconds;
  return { from: to - windowSeconds, to };
}

export interface Verdict {
  breach: boolean;
  threshold: number;
  /** change rules: percent against the previous window; null when that was 0. */
  changePercent: number | null;
}

export function judge(c: AlertCondition, value: number, previous: number | null): Verdict {
  if (c.op === "above") return { breach: value > c.value, threshold: c.value, changePercent: null };
  if (c.op === "below") return { breach: value < c.value, threshold: c.value, changePercent: null };
  const prev = previous ?? 0;
  if (prev === 0) {
    // From nothing to something is an unbounded rise; nothing to nothing is no change.
    return { breach: value > 0 && c.direction !== "down", threshold: c.percent, changePercent: null };
  }
  const pct = Math.round(((value - prev) / Math.abs(prev)) * 100_000) / 1000;
  const breach = c.direction === "up" ? pct > c.percent : c.direction === "down" ? -pct > c.percent : Math.abs(pct) > c.percent;
  return { breach, threshold: c.percent, changePercent: pct };
}

/** The state after a verdict: a rule fires on a breach and resolves on the first window without one. */
export function nextState(state: AlertState, breach: boolean): AlertState {
  if (breach) return "firing";
  return state === "firing" ? "resolved" : state;
}

export function defaultBaseUrl(): string {
  const config = env();
  return config.CALLBOARD_PUBLIC_URL ?? `http://localhost:${config.PORT}`;
}

interface Computed {
  current: Measurement | null;
  previous: Measurement | null;
  note: string | null;
}

async function compute(db: Db, engine: AnalyticsEngine, rule: RuleRecord, range: WindowRange): Promise<Computed> {
  const needCalls = rule.minCalls > 0;
  try {
    const current = await measure(db, engine, rule.metric, rule.filters, range, needCalls);
    const previous =
      rule.condition.op === "change"
        ? await measure(db, engine, rule.metric, rule.filters, { from: range.from - rule.windowSeconds, to: range.from }, needCalls)
        : null;
    const quiet = [current, previous].find((m) => m !== null && m.calls < rule.minCalls);
    const note = quiet ? `too few calls (${quiet.calls} < ${rule.minCalls})${quiet === previous ? " in the previous window" : ""}` : null;
    return { current, previous, note };
  } catch (err) {
    return { current: null, previous: null, note: `evaluation failed: ${err instanceof Error ? err.message : String(err)}`.slice(0, 500) };
  }
}

/** Evaluates one rule over one window and records the result (see the module comment). */
export async function evaluateRule(db: Db, rule: RuleRecord, range: WindowRange, options: EvaluateOptions = {}): Promise<EvaluationResult> {
  const engine = options.engine ?? analyticsEngine();
  const nowMs = options.nowMs ?? Date.now();
  const { current, previous, note } = await compute(db, engine, rule, range);
  const verdict = current && note === null ? judge(rule.condition, current.value, previous?.value ?? null) : null;
  const base = { ruleId: rule.id, window: range, value: current?.value ?? null, calls: current?.calls ?? null, note };

  return stateTransaction(db, async (tx): Promise<EvaluationResult> => {
      const { alertEvents, alertOutbox, alertRules } = tablesOf(tx);
      // Another server evaluating the same rule waits here, then reads the window this
      // one recorded and skips it: each window is evaluated, and notified, once.
      await serializeWithin(tx, `alert-rule:${rule.id}`);
      const [row] = await tx.select().from(alertRules).where(eq(alertRules.pk, rule.id));
      // Changed meanwhile (edited, disabled, removed) or already evaluated: record nothing.
      if (!row || row.version !== rule.version || !row.enabled || (row.lastWindowTo ?? -Infinity) >= range.to) {
        return { ...base, outcome: "skipped", state: row?.state ?? rule.state };
      }
      const from = row.state;
      const to = verdict ? nextState(from, verdict.breach) : from;
      if (verdict && current && to !== from) {
        const eventId = `evt_${rule.id}_${range.to}_${to}`;
        await tx
          .insert(alertEvents)
          .values({
            rulePk: rule.id, eventId, fromState: from, toState: to, atMs: nowMs, windowFrom: range.from, windowTo: range.to,
            value: current.value, previousValue: previous?.value ?? null, threshold: verdict.threshold, calls: current.calls,
          })
          .onConflictDoNothing();
        if (row.destinationUrlEnc) {
          const body = buildNotification({
            eventId, rule: decodeRule(row), from, to, range, value: current.value, previousValue: previous?.value ?? null,
            changePercent: verdict.changePercent, threshold: verdict.threshold, calls: current.calls, atMs: nowMs,
            baseUrl: options.baseUrl ?? defaultBaseUrl(),
          });
          await tx
            .insert(alertOutbox)
            .values({ rulePk: rule.id, eventId, body: JSON.stringify(body), createdMs: nowMs, nextAttemptMs: nowMs })
            .onConflictDoNothing();
        }
      }
      await tx
        .update(alertRules)
        .set({
          state: to, stateSinceMs: to !== from ? nowMs : row.stateSinceMs, lastWindowTo: range.to, lastEvaluatedMs: nowMs,
          lastValue: current?.value ?? null, lastPreviousValue: previous?.value ?? null, lastCalls: current?.calls ?? null, lastNote: note,
        })
        .where(eq(alertRules.pk, rule.id));
      const outcome = !verdict ? "no_verdict" : to === from ? "unchanged" : to === "firing" ? "fired" : "resolved";
      return { ...base, outcome, state: to };
  });
}

/** Where an enabled rule stands: the last window evaluated, and when the next one is evaluated. */
export interface UpcomingEvaluation {
  ruleId: number;
  name: string;
  /** The end (epoch s) of the last window evaluated, and when (ms); null before the first. */
  lastWindowTo: number | null;
  lastEvaluatedMs: number | null;
  /** The next window not evaluated yet: it closes at `windowTo` and is evaluated from `dueMs` (after the delay). */
  next: WindowRange;
  dueMs: number;
}

/**
 * Per enabled rule, the next window to evaluate and when it becomes due: what "Evaluate
 * now" tells a person who finds nothing to evaluate (the schedule got there first).
 */
export async function upcomingEvaluations(db: Db, options: Pick<EvaluateOptions, "nowMs" | "delaySeconds"> = {}): Promise<UpcomingEvaluation[]> {
  const nowMs = options.nowMs ?? Date.now();
  const delay = options.delaySeconds ?? env().ALERTS_DELAY_SECONDS;
  const { alertRules } = tablesOf(db);
  const rows = await db.select().from(alertRules).where(eq(alertRules.enabled, true)).orderBy(alertRules.pk);
  return rows.map((row) => {
    const closed = lastClosedWindow(nowMs, row.windowSeconds, delay);
    // Already evaluated: the next is the window after it; else the closed one is due now.
    const next = row.lastWindowTo !== null && row.lastWindowTo >= closed.to ? { from: closed.to, to: closed.to + row.windowSeconds } : closed;
    return { ruleId: row.pk, name: row.name, lastWindowTo: row.lastWindowTo, lastEvaluatedMs: row.lastEvaluatedMs, next, dueMs: (next.to + delay) * 1000 };
  });
}

/** Evaluates every enabled rule whose latest closed window has not been evaluated yet. */
export async function evaluateDueRules(db: Db, options: EvaluateOptions = {}): Promise<EvaluationResult[]> {
  const nowMs = options.nowMs ?? Date.now();
  const delay = options.delaySeconds ?? env().ALERTS_DELAY_SECONDS;
  const { alertRules } = tablesOf(db);
  const rows = options.ruleId === undefined
    ? await db.select().from(alertRules).where(eq(alertRules.enabled, true)).orderBy(alertRules.pk)
    : (await db.select().from(alertRules).where(eq(alertRules.pk, options.ruleId))).filter((r) => r.enabled);
  const results: EvaluationResult[] = [];
  for (const row of rows) {
    let rule: RuleRecord;
    try {
      rule = decodeRule(row);
    } catch (err) {
      logger.error({ rule: row.pk, err: err instanceof Error ? err.message : String(err) }, "alert rule unreadable");
      continue;
    }
    const range = lastClosedWindow(nowMs, rule.windowSeconds, delay);
    if (rule.lastWindowTo !== null && rule.lastWindowTo >= range.to) continue;
    // One rule at a time: a handful of reports per window, never a burst on the engine.
    const result = await evaluateRule(db, rule, range, { ...options, nowMs });
    if (result.note?.startsWith("evaluation failed")) logger.warn({ rule: rule.id, note: result.note }, "alert evaluation failed");
    results.push(result);
  }
  return results;
}
