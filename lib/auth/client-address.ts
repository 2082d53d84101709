/**
 * The client address used by the sign-in throttle.
 *
 * `npm start` (scripts/server.ts) copies the TCP peer address into PEER_HEADER on
 * every request, overwriting anything a client sent. X-Forwarded-For is trusted only
 * when that peer is a loopback address — a reverse proxy on the same host — and then
 * only its LAST hop, the one that proxy appended: earlier hops are whatever the client
 * wrote and would let anyone pick a fresh address per attempt.
 * See docs/decisions/0005-sessions-and-throttle.md.
 */
export const PEER_HEADER = "x-callboard-peer";

type HeaderSource = Pick<Headers, "get">;

export function isLoopback(address: string): boolean {
  const a = address.replace(/^::ffff:/i, "");
  return a === "::1" || a === "localhost" || /^127\./.test(a);
}

function lastForwardedHop(headers: HeaderSource): string | undefined {
  const xff = headers.get("x-forwarded-for");
  if (!xff) return undefined;
  const hops = xff.split(",").map((h) => h.trim()).filter(Boolean);
  return hops.at(-1);
}

function normalise(address: string): string {
  // One client, one key: IPv4-mapped IPv6 and plain IPv4 are the same address.
  return address.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i, "$1").slice(0, 100);
}

export function clientAddress(headers: HeaderSource): string {
  const peer = headers.get(PEER_HEADER)?.trim();
  if (peer && !isLoopback(peer)) return normalise(peer);
  // Loopback peer (a local reverse proxy) or no peer header (served by another server,
  // where Next.js fills X-Forwarded-For with the socket address when it is absent).
  const forwarded = lastForwardedHop(headers);
  if (forwarded) return normalise(forwarded);
  return peer ? normalise(peer) : "unknown";
}
