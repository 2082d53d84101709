import { env } from "@/lib/config/env";
import { DEFAULT_TRUSTED_PROXIES, forwardedClient, normaliseAddress as normalise, parseTrustedProxies, type TrustedProxies } from "@/lib/http/trusted-proxies";

/**
 * The client address used by the sign-in throttle and the per-client connection cap.
 *
 * `npm start` (lib/server/start.ts) copies the TCP peer address into PEER_HEADER on
 * every request, overwriting anything a client sent. X-Forwarded-For is believed only
 * when that peer is a trusted proxy (`TRUSTED_PROXIES`, a CIDR list; default: loopback,
 * a reverse proxy on the same host), and then read from the right: each hop a trusted
 * proxy appended is skipped, and the first hop that is not a trusted proxy is the
 * client. Hops left of it are whatever the client wrote and would let anyone pick a
 * fresh address per attempt. See docs/decisions/0005-sessions-tokens-throttle.md and 0037.
 */
export const PEER_HEADER = "x-callboard-peer";

type HeaderSource = Pick<Headers, "get">;

let cached: { value: string; proxies: TrustedProxies } | undefined;

/** The configured trusted proxies (parsed once per value). */
export function trustedProxies(): TrustedProxies {
  const value = env().TRUSTED_PROXIES ?? DEFAULT_TRUSTED_PROXIES;
  if (cached?.value !== value) cached = { value, proxies: parseTrustedProxies(value) };
  return cached.proxies;
}

export function clientAddress(headers: HeaderSource, proxies: TrustedProxies = trustedProxies()): string {
  const peer = headers.get(PEER_HEADER)?.trim();
  if (peer && !proxies.contains(peer)) return normalise(peer);
  // A trusted proxy's peer, or no peer header (served by another server, where Next.js
  // fills X-Forwarded-For with the socket address when it is absent).
  const forwarded = forwardedClient(headers.get("x-forwarded-for"), proxies);
  if (forwarded) return forwarded;
  return peer ? normalise(peer) : "unknown";
}
