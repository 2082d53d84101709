import path from "node:path";
import { describe, expect, it } from "vitest";
import { appRoutes, createRouteResolver, UNMATCHED } from "./route-template";

describe("route templates (metrics and access-log labels)", () => {
  const resolve = createRouteResolver(appRoutes(path.join(process.cwd(), "app")));

  it.each([
    ["/api/v1/calls?app=acme&from=1", "/api/v1/calls"],
    ["/api/v1/calls/sess-1234?app=acme", "/api/v1/calls/[sessionId]"],
    ["/api/webhooks/acme", "/api/webhooks/[appId]"],
    ["/api/webhooks/anything-a-client-types", "/api/webhooks/[appId]"],
    ["/api/v1/users/me", "/api/v1/users/me"],
    ["/api/v1/users/42", "/api/v1/users/[id]"],
    ["/api/auth/callback/credentials", "/api/auth/[...nextauth]"],
    ["/calls", "/calls"],
    ["/calls/abc", "/calls/[sessionId]"],
    ["/", "/"],
    ["/metrics", "/metrics"],
    ["/api/health", "/api/health"],
    ["/api/health/live", "/api/health/live"],
    ["/_next/static/chunks/app-123.js", "/_next/[...asset]"],
    ["/no/such/page/at/all", UNMATCHED],
    ["/api/v1/calls/a/b", UNMATCHED],
  ])("%s is %s", (url, route) => {
    expect(resolve(url)).toBe(route);
  });

  it("never makes a label out of a path it does not know", () => {
    const labels = new Set(Array.from({ length: 500 }, (_, i) => resolve(`/x${i}/y${i}`)));
    expect([...labels]).toEqual([UNMATCHED]);
  });
});
