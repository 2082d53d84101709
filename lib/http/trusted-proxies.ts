import { BlockList, isIP } from "node:net";

/**
 * `TRUSTED_PROXIES`: the reverse proxies whose X-Forwarded-For is believed. Its own
 * module (no configuration import) so that the environment schema can check a value
 * with the same parser the server uses. Who uses it: lib/auth/client-address.ts (the
 * sign-in throttle's address) and lib/server/http-limits.ts (the per-client cap).
 */

/** Today's behaviour when TRUSTED_PROXIES is not set: a proxy on this host. */
export const DEFAULT_TRUSTED_PROXIES = "127.0.0.0/8, ::1/128";

export interface TrustedProxies {
  contains(address: string): boolean;
}

export function normaliseAddress(address: string): string {
  // One client, one key: IPv4-mapped IPv6 and plain IPv4 are the same address.
  return address.trim().replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i, "$1").slice(0, 100);
}

/** Why a TRUSTED_PROXIES value is refused, or undefined when it is a valid CIDR list (or `none`). */
export function trustedProxiesProblem(value: string): string | undefined {
  try {
    parseTrustedProxies(value);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

/** `10.0.0.0/8, 192.168.1.7, fd00::/8`: a CIDR list (a bare address is a /32 or /128); `none` trusts no one. */
export function parseTrustedProxies(value: string): TrustedProxies {
  const list = new BlockList();
  const text = value.trim();
  if (text !== "none") {
    for (const entry of text.split(",").map((e) => e.trim()).filter(Boolean)) {
      const [address = "", prefixText, extra] = entry.split("/");
      const family = isIP(address);
      const max = family === 6 ? 128 : 32;
      const prefix = prefixText === undefined ? max : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
      if (family === 0 || extra !== undefined || !(prefix >= 0 && prefix <= max)) {
        throw new Error(`"${entry.slice(0, 60)}" is not an address or a CIDR range such as 10.0.0.0/8 or fd00::/8`);
      }
      list.addSubnet(address, prefix, family === 6 ? "ipv6" : "ipv4");
    }
  }
  return {
    contains(raw: string) {
      const address = normaliseAddress(raw);
      const family = isIP(address);
      return family !== 0 && list.check(address, family === 6 ? "ipv6" : "ipv4");
    },
  };
}

/** The client behind a chain of trusted proxies: the right-most X-Forwarded-For hop that is not one of them. */
export function forwardedClient(forwardedFor: string | null | undefined, proxies: TrustedProxies): string | undefined {
  if (!forwardedFor) return undefined;
  const hops = forwardedFor.split(",").map((h) => h.trim()).filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    if (!proxies.contains(hops[i]!)) return normaliseAddress(hops[i]!);
  }
  return hops.length > 0 ? normaliseAddress(hops[0]!) : undefined;
}

