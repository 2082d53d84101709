/**
 * The in-server schedule of the alerts (croner, started by lib/server/start.ts beside
 * the sync schedule): every ALERTS_INTERVAL_SECONDS, evaluate the rules whose window has
 * closed, then send the notifications that are due. A tick that is still running when
 * the next one is due makes that one wait (`protect`), so ticks never overlap in a process;
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
  const job = new Cron("* * * * * *", { interval: Math.max(1, Math.floor(options.intervalSeconds)), protect: true, unref: true }, async () => {
    current = runAlertsTick(db).then(
      (r) => {
        const changed = r.evaluated.filter((e) => e.outcome === "fired" || e.outcome === "resolved");
        if (changed.length) log.info({ changes: changed.map((e) => ({ rule: e.ruleId, outcome: e.outcome, value: e.value })) }, "alert state changed");
      },
      (err: unknown) => log.error({ err: err instanceof Error ? err.message : String(err) }, "alerts tick failed"),
    );
    await current;
  });
  return {
    stop: async () => {
      job.stop();
      await current;
    },
  };
}
