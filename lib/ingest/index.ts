/** The push side: webhook deliveries authenticated, persisted, then applied. */
export { createIngestor, MAX_BODY_BYTES } from "./ingest";
export type { IngestApp, IngestHeaders, IngestResult, Ingestor, IngestorOptions, Preflight } from "./ingest";
export { getIngestor, closeIngestor, openIngestConnection } from "./runtime";
export { createIngestHttpHandler, matchIngestPath, INGEST_PREFIX } from "./webhook-handler";
export { handleWebhookRequest } from "./web";
export { basicAuthHeader } from "./auth";
export { toEpochSeconds, triggerCategory, CHAT_TRIGGERS, CALL_TRIGGERS, MEETING_TRIGGERS, RECORDING_TRIGGER } from "../platform/webhook-envelope";
export type { TriggerCategory, Envelope } from "../platform/webhook-envelope";
export {
  getLiveSessions, getEventCounts, getRecentDeliveries, countDeliveries, ingestUrlFor, describeWebhook,
} from "./queries";
export type {
  LiveSession, LiveOccupant, LiveSessionsParams, EventCount, EventCountsParams, RecentDelivery,
  RecentDeliveriesParams, DeliveryOutcomeFilter, WebhookSettingsView,
} from "./queries";
