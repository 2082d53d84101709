/**
 * The in-server schedule of the alerts (croner, started by lib/server/start.ts beside
 * the sync schedule): every ALERTS_INTERVAL_SECONDS, evaluate the rules whose window has
 * closed, then start sending the notifications that are due. Evaluation never waits on
 * delivery: a tick starts a delivery pass and does not await it, so a slow destination
 * (each attempt has a total deadline, lib/alerts/outbox.ts) delays only its own messages.
 * An evaluation still running when the next tick is due makes that one wait (`protect`);
 * across processes the stored window and the outbox lease keep every step single.
 */
import { Cron } from "croner";
import type { Db } from "@/db/client";
import { logger } from "@/lib/log/logger";
import { evaluateDueRules, type EvaluateOptions, type EvaluationResult } from "./evaluate";
import { deliverDue, type DeliverOptions, type DeliveryOutcome } from "./outbox";

export interface TickResult {
  evaluated: EvaluationResult[];
  delivered: DeliveryOutcome[];
}

/** One round: evaluate what is due, then deliver what is due (also "Evaluate now"). */
export async function runAlertsTick(db: Db, options: EvaluateOptions & DeliverOptions = {}): Promise<TickResult> {
  const evaluated = await evaluateDueRules(db, options);
  const delivered = await deliverDue(db, { ...options, nowMs: options.nowMs });
  return { evaluated, delivered };
}

export interface AlertScheduler {
  stop(): Promise<void>;
}

export function startAlertScheduler(db: Db, options: { intervalSeconds: number }): AlertScheduler {
  const log = logger.child({ part: "alerts" });
  let current: Promise<unknown> | undefined;
  const deliveries = new Set<Promise<unknown>>();
  const job = new Cron("* * * * * *", { interval: Math.max(1, Math.floor(options.intervalSeconds)), protect: true, unref: true }, async () => {
    current = evaluateDueRules(db).then(
      (evaluated) => {
        const changed = evaluated.filter((e) => e.outcome === "fired" || e.outcome === "resolved");
        if (changed.length) log.info({ changes: changed.map((e) => ({ rule: e.ruleId, outcome: e.outcome, value: e.value })) }, "alert state changed");
      },
      (err: unknown) => log.error({ err: err instanceof Error ? err.message : String(err) }, "alerts evaluation failed"),
    );
    await current;
    const pass = deliverDue(db).catch((err: unknown) => log.error({ err: err instanceof Error ? err.message : String(err) }, "alerts delivery failed"));
    deliveries.add(pass);
    void pass.finally(() => deliveries.delete(pass));
  });
  return {
    stop: async () => {
      job.stop();
      await current;
      await Promise.all(deliveries);
    },
  };
}
