import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPORT_ROUTES } from "@/lib/analytics/http";
import { fastPathRoute } from "./api-fast-path";

/** Which requests the lean API path takes (0016); everything else is Next's. */
const bearer = { authorization: "Bearer cb_abc" };

describe("fastPathRoute", () => {
  it("takes a token's GET of a report and any GET of health", () => {
    expect(fastPathRoute({ method: "GET", url: "/api/v1/usage/daily?tz=Europe/Berlin", headers: bearer })).toBe("daily");
    expect(fastPathRoute({ method: "GET", url: "/api/v1/calls", headers: { authorization: "bearer  cb_x" } })).toBe("calls");
    expect(fastPathRoute({ method: "GET", url: "/api/health", headers: {} })).toBe("health");
    expect(fastPathRoute({ method: "GET", url: "/api/health?x=1", headers: { cookie: "a=b" } })).toBe("health");
  });

  it("leaves cookies, other methods, other credentials and other paths to Next", () => {
    expect(fastPathRoute({ method: "GET", url: "/api/v1/calls", headers: { ...bearer, cookie: "authjs.session-token=x" } })).toBeUndefined();
    expect(fastPathRoute({ method: "POST", url: "/api/v1/calls", headers: bearer })).toBeUndefined();
    expect(fastPathRoute({ method: "HEAD", url: "/api/v1/calls", headers: bearer })).toBeUndefined();
    expect(fastPathRoute({ method: "GET", url: "/api/v1/calls", headers: {} })).toBeUndefined();
    expect(fastPathRoute({ method: "GET", url: "/api/v1/calls", headers: { authorization: "Basic eDp5" } })).toBeUndefined();
    expect(fastPathRoute({ method: "GET", url: "/api/v1/calls/s1?app=a", headers: bearer })).toBeUndefined();
    expect(fastPathRoute({ method: "GET", url: "/api/v1/calls/", headers: bearer })).toBeUndefined();
    expect(fastPathRoute({ method: "GET", url: "/api/v1/statements?month=2026-01", headers: bearer })).toBeUndefined();
    expect(fastPathRoute({ method: "GET", url: "/", headers: bearer })).toBeUndefined();
  });

  it("names each report as its route file does", () => {
    for (const [route, name] of Object.entries(REPORT_ROUTES)) {
      const source = readFileSync(path.join(process.cwd(), "app", ...route.split("/").filter(Boolean), "route.ts"), "utf8");
      expect(source, route).toContain(`handleReport(request, "${name}")`);
    }
  });
});
