import { describe, expect, it } from "vitest";
import { REPORT_NAMES, reportRoute } from "@/lib/analytics/report-registry";
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

  it("takes a token's GET of every report of the table, the four added last too", () => {
    for (const [route, name] of [
      ["/api/v1/usage/participants/combined?person=ali", "participants-combined"],
      ["/api/v1/recordings/summary", "recording-summary"],
      ["/api/v1/recordings/awaiting?page=2", "recordings-awaiting"],
      ["/api/v1/insights/clients?format=csv", "clients"],
    ]) {
      expect(fastPathRoute({ method: "GET", url: route, headers: bearer }), route).toBe(name);
    }
    for (const name of REPORT_NAMES) expect(fastPathRoute({ method: "GET", url: reportRoute(name), headers: bearer })).toBe(name);
  });
});
