/** Where the platform delivers webhooks for one app. No server imports: safe in the browser. */
export const INGEST_PREFIX = "/api/webhooks";

/** The address to paste into the platform's webhook console. */
export function ingestUrlFor(baseUrl: string, appId: string): string {
  return `${baseUrl.replace(/\/+$/, "")}${INGEST_PREFIX}/${encodeURIComponent(appId)}`;
}
