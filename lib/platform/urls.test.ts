import { describe, expect, it } from "vitest";
import { assertAppId, assertRegion, buildCallsUrl, PlatformConfigError } from "./urls";

describe("calls URL", () => {
  it("builds https://{appid}.call-{region}.{domain}/v3 for each region", () => {
    for (const region of ["us", "eu", "in"]) {
      expect(buildCallsUrl({ appId: "25a1b2c3", region, domain: "example.com" })).toBe(`https://25a1b2c3.call-${region}.example.com/v3`);
    }
  });

  it("uses the override as given, without a trailing slash", () => {
    expect(buildCallsUrl({ appId: "x", region: "us", callsUrl: "http://127.0.0.1:4010/apps/x/v3/" })).toBe("http://127.0.0.1:4010/apps/x/v3");
    expect(() => buildCallsUrl({ appId: "x", region: "us", callsUrl: "ftp://a" })).toThrow(PlatformConfigError);
    expect(() => buildCallsUrl({ appId: "x", region: "us", callsUrl: "https://u:p@a/v3" })).toThrow(/credentials/);
  });

  it("validates region, app id and domain", () => {
    expect(() => assertRegion("asia")).toThrow(/us, eu, in/);
    expect(() => assertAppId("bad_id!")).toThrow(/app id/);
    expect(() => assertAppId("-x")).toThrow();
    expect(assertAppId("a-1")).toBe("a-1");
    expect(() => buildCallsUrl({ appId: "a1", region: "us" })).toThrow(/PLATFORM_DOMAIN/);
    expect(() => buildCallsUrl({ appId: "a1", region: "us", domain: "exa mple.com" })).toThrow(/bare domain/);
  });
});
