/** Alerts: rules over the analytics, evaluated once per window, notified by signed webhooks. See docs/decisions/0013-alerts.md. */
export { createRule, updateRule, deleteRule, listRules, getRule, type RuleView } from "./rules";
export { listHistory, firingCount, type AlertEventView, type NotificationStatus } from "./history";
export { evaluateDueRules, evaluateRule, lastClosedWindow, type EvaluationResult } from "./evaluate";
export { deliverDue, nextAttemptAt, RETRY_DELAYS_MS, GIVE_UP_AFTER_MS } from "./outbox";
export { runAlertsTick, startAlertScheduler, type TickResult } from "./scheduler";
export type { Notification } from "./payload";
