/**
 * Addresses of the platform's Calls API: `https://{appid}.call-{region}.{domain}/v3`
 * (seed, placeholders table), or a per-app override of the whole address.
 */
export const REGIONS = ["us", "eu", "in"] as const;
export type Region = (typeof REGIONS)[number];

/** The app id becomes a DNS label of the host, so it must be one. */
const APP_ID_RE = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;
const DOMAIN_RE = /^[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?(?::\d{1,5})?$/i;

export class PlatformConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PlatformConfigError";
  }
}

export function isRegion(value: unknown): value is Region {
  return typeof value === "string" && (REGIONS as readonly string[]).includes(value);
}

export function assertRegion(value: unknown): Region {
  if (!isRegion(value)) {
    throw new PlatformConfigError(`region must be one of ${REGIONS.join(", ")} (got ${JSON.stringify(value)})`);
  }
  return value;
}

export function isValidAppId(value: unknown): value is string {
  return typeof value === "string" && APP_ID_RE.test(value);
}

export function assertAppId(value: unknown): string {
  if (!isValidAppId(value)) {
    throw new PlatformConfigError(
      `app id must be 1-63 letters, digits or '-', not starting or ending with '-' (got ${JSON.stringify(value)})`,
    );
  }
  return value;
}

/** Normalises an override: an absolute http(s) URL, without a trailing slash. */
export function normaliseCallsUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new PlatformConfigError(`calls URL is not a valid URL: ${JSON.stringify(value)}`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new PlatformConfigError(`calls URL must use https (or http for a local emulator): ${JSON.stringify(value)}`);
  }
  if (url.username || url.password) throw new PlatformConfigError("calls URL must not carry credentials");
  url.search = "";
  url.hash = "";
  return url.toString().replace(/\/+$/, "");
}

export interface CallsUrlInput {
  appId: string;
  region: string;
  /** Override of the whole address (an app's `--calls-url`). */
  callsUrl?: string | null;
  /** The platform's domain (PLATFORM_DOMAIN). */
  domain?: string | null;
}

/** The Calls API base address of one app (the `/calls` path is appended by the client). */
export function buildCallsUrl({ appId, region, callsUrl, domain }: CallsUrlInput): string {
  if (callsUrl && callsUrl.trim() !== "") return normaliseCallsUrl(callsUrl);
  const r = assertRegion(region);
  const id = assertAppId(appId);
  if (!domain || domain.trim() === "") {
    throw new PlatformConfigError(
      `app ${appId}: no calls URL — set PLATFORM_DOMAIN or give the app a calls URL override`,
    );
  }
  const d = domain.trim().replace(/^https?:\/\//i, "").replace(/\/+$/, "");
  if (!DOMAIN_RE.test(d)) throw new PlatformConfigError(`PLATFORM_DOMAIN is not a bare domain: ${JSON.stringify(domain)}`);
  return `https://${id.toLowerCase()}.call-${r}.${d}/v3`;
}
