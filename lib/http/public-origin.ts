import { env } from "@/lib/config/env";

/**
 * Where this dashboard is reached, for redirects and the same-origin check of writes.
 *
 * Never a guess: the configured address (AUTH_URL, next-auth's own setting, else
 * CALLBOARD_PUBLIC_URL), else the address the request itself came in on. Next.js
 * builds request URLs from the host name the server was started with and turns any
 * 127.0.0.1 into `localhost`, so `request.url` / `nextUrl` are not used for either.
 * X-Forwarded-Host and X-Forwarded-Proto count only with AUTH_TRUST_HOST=true (a
 * reverse proxy of your own sets them).
 */
type HeaderSource = Pick<Headers, "get">;

const firstValue = (v: string | null) => v?.split(",")[0]?.trim() || null;
/** A Host header value: a name or address and an optional port, nothing else. */
const HOST = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:\d{1,5})?$/i;

/** The origin of AUTH_URL, else of CALLBOARD_PUBLIC_URL; null when neither is set. */
export function configuredOrigin(): string | null {
  const e = env();
  const url = e.AUTH_URL ?? e.CALLBOARD_PUBLIC_URL;
  return url ? new URL(url).origin : null;
}

/** `http(s)://host[:port]` the request came in on, or null without a usable Host header. */
export function requestOrigin(headers: HeaderSource): string | null {
  const trusted = env().AUTH_TRUST_HOST;
  const host = (trusted && firstValue(headers.get("x-forwarded-host"))) || headers.get("host");
  if (!host || !HOST.test(host)) return null;
  const proto = trusted ? firstValue(headers.get("x-forwarded-proto")) : null;
  return `${proto === "https" ? "https" : "http"}://${host.toLowerCase()}`;
}

/** The configured origin, else the request's own. */
export function publicOrigin(headers: HeaderSource): string | null {
  return configuredOrigin() ?? requestOrigin(headers);
}

/** Every `host[:port]` that is this server's own for this request (lower case). */
export function ownHosts(headers: HeaderSource): Set<string> {
  const e = env();
  const hosts = new Set<string>();
  for (const url of [e.AUTH_URL, e.CALLBOARD_PUBLIC_URL]) if (url) hosts.add(new URL(url).host);
  const host = headers.get("host");
  if (host && HOST.test(host)) hosts.add(new URL(`http://${host}`).host);
  const forwarded = e.AUTH_TRUST_HOST ? firstValue(headers.get("x-forwarded-host")) : null;
  if (forwarded && HOST.test(forwarded)) hosts.add(new URL(`http://${forwarded}`).host);
  return hosts;
}
