import { describe, expect, it } from "vitest";
import { HttpError } from "@/lib/http/errors";
import type { AnalyticsEngine } from "./engine";
import { handleReport } from "./report-handler";

/** The order of a report route: who asks, then what they ask for (as every other route). */
const noEngine = (): AnalyticsEngine => {
  throw new Error("the engine must not be asked");
};

describe("handleReport", () => {
  it("answers an unsigned request 401 whatever its filters, before reading them", async () => {
    const deps = {
      authorize: async () => {
        throw new HttpError(401, "unauthorized", "Sign in or send an API token.");
      },
      engine: noEngine,
    };
    const res = await handleReport(new Request("http://x/api/v1/usage/apps?tz=Not/AZone&sort=bogus"), "apps", deps);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
  });

  it("answers a signed request's bad filter 400, naming the parameter, without asking the engine", async () => {
    const deps = { authorize: async () => ({ kind: "user", userId: 1, role: "admin" }) as never, engine: noEngine };
    const res = await handleReport(new Request("http://x/api/v1/usage/apps?tz=Not/AZone"), "apps", deps);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("invalid_parameter");
    expect(body.error.message).toContain("tz");
  });
});
