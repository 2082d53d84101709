import { afterEach, describe, expect, it } from "vitest";
import { resetEnvForTests } from "@/lib/config/env";
import { publicOrigin, requestOrigin } from "@/lib/http/public-origin";
import { cookieWriteRefusal } from "./same-origin";
import { useTestEnv } from "./test-support";

const req = (method: string, headers: Record<string, string>) => ({ method, headers: new Headers(headers) });
const refusal = (method: string, headers: Record<string, string>, jsonBody = true) => cookieWriteRefusal(req(method, headers), { jsonBody });

afterEach(() => {
  useTestEnv({ AUTH_URL: undefined, CALLBOARD_PUBLIC_URL: undefined, AUTH_TRUST_HOST: undefined });
  resetEnvForTests();
});

describe("writes signed in by cookie", () => {
  it("pass from the request's own host, by Origin or else Referer", () => {
    useTestEnv({ AUTH_TRUST_HOST: undefined });
    expect(refusal("POST", { host: "dash.example:8080", origin: "http://dash.example:8080", "content-type": "application/json", "content-length": "2" })).toBeNull();
    expect(refusal("DELETE", { host: "dash.example", referer: "https://dash.example/settings" })).toBeNull();
    expect(refusal("GET", { host: "dash.example", origin: "http://evil.example" })).toBeNull();
    expect(refusal("POST", { host: "dash.example", origin: "http://evil.example", authorization: "Bearer cb_x" })).toBeNull();
  });

  it("are refused from anywhere else, or from nowhere said", () => {
    useTestEnv({ AUTH_TRUST_HOST: undefined });
    const attempts: Array<Record<string, string>> = [
      { host: "dash.example", origin: "http://evil.example" },
      { host: "dash.example", origin: "http://sub.dash.example" },
      { host: "dash.example", origin: "null" },
      { host: "dash.example", origin: "http://dash.example:81" },
      { host: "dash.example", referer: "http://evil.example/dash.example" },
      { host: "dash.example" },
      // X-Forwarded-Host counts only behind a trusted proxy.
      { host: "dash.example", "x-forwarded-host": "evil.example", origin: "http://evil.example" },
    ];
    for (const headers of attempts) {
      expect(refusal("POST", headers)?.status, JSON.stringify(headers)).toBe(403);
    }
  });

  it("need application/json for a JSON body, not for a server action's form", () => {
    useTestEnv({ AUTH_TRUST_HOST: undefined });
    const own = { host: "dash.example", origin: "http://dash.example" };
    expect(refusal("POST", { ...own, "content-type": "text/plain", "content-length": "10" })?.status).toBe(415);
    expect(refusal("PATCH", { ...own, "content-type": "application/x-www-form-urlencoded", "transfer-encoding": "chunked" })?.status).toBe(415);
    expect(refusal("POST", { ...own, "content-type": "text/plain", "content-length": "0" })).toBeNull();
    expect(refusal("POST", { ...own, "content-type": "multipart/form-data; boundary=x", "content-length": "10" }, false)).toBeNull();
  });

  it("take the configured public address as their own too", () => {
    useTestEnv({ AUTH_URL: "https://callboard.example.com", AUTH_TRUST_HOST: undefined });
    expect(refusal("POST", { host: "10.0.0.5:3000", origin: "https://callboard.example.com" })).toBeNull();
  });
});

describe("the public origin", () => {
  it("is the configured one, else the request's own host, never a guess", () => {
    useTestEnv({ AUTH_URL: "http://127.0.0.1:4000", AUTH_TRUST_HOST: undefined });
    expect(publicOrigin(new Headers({ host: "localhost:4000" }))).toBe("http://127.0.0.1:4000");
    useTestEnv({ AUTH_URL: undefined, CALLBOARD_PUBLIC_URL: "https://cb.example.org/base", AUTH_TRUST_HOST: undefined });
    expect(publicOrigin(new Headers({ host: "localhost:4000" }))).toBe("https://cb.example.org");
    useTestEnv({ AUTH_URL: undefined, CALLBOARD_PUBLIC_URL: undefined, AUTH_TRUST_HOST: undefined });
    expect(publicOrigin(new Headers({ host: "Dash.Example:8080" }))).toBe("http://dash.example:8080");
    expect(requestOrigin(new Headers({ host: "bad host/<x>" }))).toBeNull();
    expect(requestOrigin(new Headers({ host: "dash.example", "x-forwarded-host": "proxy.example", "x-forwarded-proto": "https" }))).toBe("http://dash.example");
    useTestEnv({ AUTH_TRUST_HOST: "true" });
    expect(requestOrigin(new Headers({ host: "10.0.0.5", "x-forwarded-host": "proxy.example, inner", "x-forwarded-proto": "https" }))).toBe("https://proxy.example");
  });
});
