import { collectDefaultMetrics, Counter, Histogram, Registry } from "prom-client";

/**
 * The process's Prometheus metrics (issue 27 item 2; docs/decisions/0031-metrics-and-access-log.md),
 * served at `/metrics` by lib/server/metrics-endpoint.ts. Counted where they happen:
 * HTTP requests (lib/server/observe.ts), webhook deliveries (lib/ingest/ingest.ts), report
 * durations (lib/analytics/engine.ts). Read from the warehouse at each scrape: syncs, the
 * ClickHouse forward backlog, the alert outbox (warehouse-collectors.ts), so that a sync
 * run by `npm run sync` in another process counts as well.
 *
 * One registry per process on `globalThis`: Next's bundle and the server's own modules are
 * two copies of this file, and both must count into the metrics the scrape reads. Every
 * label is a closed set or a configured app id, never a raw path or other client input.
 */
export interface CallboardMetrics {
  registry: Registry;
  httpRequestDuration: Histogram<"method" | "route" | "status">;
  webhookDeliveries: Counter<"app" | "outcome">;
  reportDuration: Histogram<"report" | "engine" | "format">;
}

const KEY = Symbol.for("callboard.metrics");

function create(): CallboardMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpRequestDuration: new Histogram({
      name: "callboard_http_request_duration_seconds",
      help: "HTTP requests by method, route template and status, until the answer's last byte (the _count is the number of requests).",
      labelNames: ["method", "route", "status"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    webhookDeliveries: new Counter({
      name: "callboard_webhook_deliveries_total",
      help: "Webhook deliveries for configured apps: accepted (stored), repeated (a repeat, counted once), rejected (4xx), unavailable (503, to be sent again).",
      labelNames: ["app", "outcome"],
      registers: [registry],
    }),
    reportDuration: new Histogram({
      name: "callboard_report_duration_seconds",
      help: "Analytics engine answers by report, engine and format (csv: until the export starts streaming).",
      labelNames: ["report", "engine", "format"],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
  };
}

export function metrics(): CallboardMetrics {
  const holder = globalThis as { [KEY]?: CallboardMetrics };
  holder[KEY] ??= create();
  return holder[KEY];
}

export type WebhookOutcome = "accepted" | "repeated" | "rejected" | "unavailable";

export function countWebhookDelivery(app: string, outcome: WebhookOutcome): void {
  metrics().webhookDeliveries.inc({ app, outcome });
}

/** Times an engine answer (resolved or failed). */
export async function timeReport<T>(labels: { report: string; engine: string; format: "json" | "csv" }, answer: () => Promise<T>): Promise<T> {
  const end = metrics().reportDuration.startTimer(labels);
  try {
    return await answer();
  } finally {
    end();
  }
}
