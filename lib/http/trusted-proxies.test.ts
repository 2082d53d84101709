import { describe, expect, it } from "vitest";
import { clientAddress, PEER_HEADER } from "@/lib/auth/client-address";
import { DEFAULT_TRUSTED_PROXIES, forwardedClient, parseTrustedProxies, trustedProxiesProblem } from "./trusted-proxies";

describe("TRUSTED_PROXIES", () => {
  it("parses a CIDR list of IPv4 and IPv6 ranges and bare addresses", () => {
    const p = parseTrustedProxies(" 10.0.0.0/8, 192.168.1.7 ,fd00::/8, ::1 ");
    for (const a of ["10.1.2.3", "::ffff:10.200.0.1", "192.168.1.7", "fd12::1", "::1"]) expect(p.contains(a), a).toBe(true);
    for (const a of ["11.0.0.1", "192.168.1.8", "fe80::1", "127.0.0.1", "", "junk"]) expect(p.contains(a), a).toBe(false);
  });

  it("refuses what is not a range, naming it; `none` trusts no one", () => {
    for (const bad of ["10.0.0.0/33", "10.0.0/8", "proxy.example.com", "::1/129", "10.0.0.1/8/1", "10.0.0.0/x"]) {
      expect(trustedProxiesProblem(bad), bad).toMatch(/not an address or a CIDR range/);
    }
    expect(trustedProxiesProblem("none")).toBeUndefined();
    expect(parseTrustedProxies("none").contains("127.0.0.1")).toBe(false);
    expect(parseTrustedProxies(DEFAULT_TRUSTED_PROXIES).contains("127.0.0.9")).toBe(true);
  });

  it("finds the client right of everything the client wrote and left of every trusted proxy", () => {
    const p = parseTrustedProxies("10.0.0.0/8");
    expect(forwardedClient("6.6.6.6, 198.51.100.9, 10.0.0.5, 10.0.0.6", p)).toBe("198.51.100.9");
    expect(forwardedClient("10.0.0.5", p)).toBe("10.0.0.5");
    expect(forwardedClient("", p)).toBeUndefined();
  });

  it("a peer that is a trusted proxy is looked through; any other peer is the client, whatever it writes", () => {
    const p = parseTrustedProxies("10.0.0.0/8");
    const h = (init: Record<string, string>) => new Headers(init);
    expect(clientAddress(h({ [PEER_HEADER]: "10.0.0.2", "x-forwarded-for": "6.6.6.6, 198.51.100.9, 10.0.0.7" }), p)).toBe("198.51.100.9");
    expect(clientAddress(h({ [PEER_HEADER]: "127.0.0.1", "x-forwarded-for": "198.51.100.9" }), p)).toBe("127.0.0.1");
    expect(clientAddress(h({ [PEER_HEADER]: "10.0.0.2" }), p)).toBe("10.0.0.2");
  });
});
