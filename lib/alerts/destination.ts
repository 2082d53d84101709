/**
 * Where a rule's notifications may go: http(s) only, and never into the server's own
 * network (loopback, private, link-local, …) unless the admin allowed it for that
 * destination. Names are checked by the addresses they resolve to, and the request
 * connects to exactly the addresses that were checked (`guardedLookup`), so a name that
 * answers a public address to the check and a private one to the connection (DNS
 * rebinding) gets nowhere. Redirects are never followed (lib/alerts/outbox.ts).
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { BlockList, isIP } from "node:net";
import { badRequest } from "@/lib/http/errors";

/** Ranges a notification may not reach without the per-destination allowance, by kind. */
const RANGES: Array<[kind: string, family: "ipv4" | "ipv6", net: string, prefix: number]> = [
  ["loopback", "ipv4", "127.0.0.0", 8],
  ["loopback", "ipv6", "::1", 128],
  ["unspecified", "ipv4", "0.0.0.0", 8],
  ["unspecified", "ipv6", "::", 128],
  ["private", "ipv4", "10.0.0.0", 8],
  ["private", "ipv4", "172.16.0.0", 12],
  ["private", "ipv4", "192.168.0.0", 16],
  ["private", "ipv4", "100.64.0.0", 10], // carrier-grade NAT
  ["private", "ipv4", "192.0.0.0", 24], // IETF protocol assignments
  ["private", "ipv4", "198.18.0.0", 15], // benchmarking
  ["private", "ipv6", "fc00::", 7], // unique local
  ["private", "ipv6", "fec0::", 10], // site-local (deprecated)
  ["link-local", "ipv4", "169.254.0.0", 16], // includes cloud metadata (169.254.169.254)
  ["link-local", "ipv6", "fe80::", 10],
  ["multicast", "ipv4", "224.0.0.0", 4],
  ["multicast", "ipv6", "ff00::", 8],
  ["reserved", "ipv4", "240.0.0.0", 4], // and 255.255.255.255
  ["reserved", "ipv4", "192.0.2.0", 24], // documentation
  ["reserved", "ipv4", "198.51.100.0", 24],
  ["reserved", "ipv4", "203.0.113.0", 24],
  ["reserved", "ipv6", "2001:db8::", 32],
  ["reserved", "ipv6", "100::", 64], // discard
  // IPv6 forms that carry an IPv4 address inside (IPv4-mapped ::ffff:a.b.c.d is matched
  // against the IPv4 ranges above by BlockList itself).
  ["reserved", "ipv6", "::", 96], // IPv4-compatible (deprecated)
  ["reserved", "ipv6", "64:ff9b::", 96], // NAT64
  ["reserved", "ipv6", "64:ff9b:1::", 48],
  ["reserved", "ipv6", "2002::", 16], // 6to4
  ["reserved", "ipv6", "2001::", 32], // Teredo
];

const LISTS = new Map<string, BlockList>();
for (const [kind, family, net, prefix] of RANGES) {
  let list = LISTS.get(kind);
  if (!list) LISTS.set(kind, (list = new BlockList()));
  list.addSubnet(net, prefix, family);
}

/** The kind of non-public range an IP address is in ("loopback", "private", …), or null when public. */
export function blockedKind(address: string): string | null {
  const v = isIP(address);
  if (v === 0) return "invalid";
  const family = v === 4 ? "ipv4" : "ipv6";
  for (const [kind, list] of LISTS) if (list.check(address, family)) return kind;
  return null;
}

export class DestinationRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DestinationRefused";
  }
}

/** The URL's host without the brackets of an IPv6 literal. */
function bareHost(url: URL): string {
  return url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
}

/** Syntax and scheme, and the address when the host is an IP literal (no lookup happens for those). */
export function checkDestinationUrl(raw: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new DestinationRefused("is not a valid URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new DestinationRefused(`must be http or https, not ${url.protocol.replace(/:$/, "")}`);
  const host = bareHost(url);
  if (host === "") throw new DestinationRefused("has no host");
  if (isIP(host) && !allowPrivate) {
    const kind = blockedKind(host);
    if (kind) throw new DestinationRefused(`${host} is a ${kind} address (allow private addresses for this destination to use it)`);
  }
  return url;
}

export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))));

/** Every address of `hostname` must be public (unless allowed); the first refused one is named. */
export async function resolveChecked(hostname: string, allowPrivate: boolean, resolver: Resolver): Promise<LookupAddress[]> {
  if (isIP(hostname)) return [{ address: hostname, family: isIP(hostname) }];
  let addresses: LookupAddress[];
  try {
    addresses = await resolver(hostname);
  } catch (err) {
    throw new DestinationRefused(`${hostname} does not resolve (${err instanceof Error && "code" in err ? String(err.code) : "lookup failed"})`);
  }
  if (addresses.length === 0) throw new DestinationRefused(`${hostname} does not resolve`);
  if (!allowPrivate) {
    for (const a of addresses) {
      const kind = blockedKind(a.address);
      if (kind) throw new DestinationRefused(`${hostname} resolves to ${a.address}, a ${kind} address (allow private addresses for this destination to use it)`);
    }
  }
  return addresses;
}

/** At save time: a clear 400 naming `destination.url` for anything the sender would refuse. */
export async function assertDestinationAllowed(raw: string, allowPrivate: boolean, resolver: Resolver = systemResolver): Promise<void> {
  try {
    const url = checkDestinationUrl(raw, allowPrivate);
    await resolveChecked(bareHost(url), allowPrivate, resolver);
  } catch (err) {
    if (err instanceof DestinationRefused) throw badRequest(`destination.url: ${err.message}`, { parameter: "destination.url" });
    throw err;
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http(s).request: resolves, refuses a blocked address, and hands the
 * socket exactly the checked addresses. Answers both shapes Node asks for (one address,
 * or `all` for happy-eyeballs).
 */
export function guardedLookup(allowPrivate: boolean, resolver: Resolver = systemResolver) {
  return (hostname: string, options: { all?: boolean; family?: number | string }, callback: LookupCallback): void => {
    resolveChecked(hostname, allowPrivate, resolver).then(
      (addresses) => {
        const family = options.family === 6 || options.family === "IPv6" ? 6 : options.family === 4 || options.family === "IPv4" ? 4 : 0;
        const usable = family ? addresses.filter((a) => a.family === family) : addresses;
        if (usable.length === 0) return callback(Object.assign(new Error(`${hostname} has no IPv${family} address`), { code: "ENOTFOUND" }), []);
        if (options.all) callback(null, usable);
        else callback(null, usable[0].address, usable[0].family);
      },
      (err: Error) => callback(Object.assign(err, { code: "EREFUSED_DESTINATION" }), []),
    );
  };
}

/** What may be shown of a destination URL: its origin and the last four characters (a chat webhook's path is its credential). */
export function describeDestinationUrl(raw: string): { origin: string; hint: string } {
  let origin = "";
  try {
    const u = new URL(raw);
    origin = `${u.protocol}//${u.host}`;
  } catch {
    origin = "(invalid)";
  }
  return { origin, hint: raw.length <= 4 ? "••••" : `…${raw.slice(-4)}` };
}
