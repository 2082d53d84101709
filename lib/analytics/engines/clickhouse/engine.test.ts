import { afterAll, describe, expect, it } from "vitest";
import { openClickHouse, parseClickHouseConfig } from "@/lib/clickhouse";
import { ClickHouseError } from "@/lib/clickhouse/client";
import { HttpError } from "@/lib/http/errors";
import { freePort } from "@/lib/server/test-server";
import { filters } from "../../filters";
import { REPORT_CSV_WRITERS } from "../../report-csv-writers";
import { openFixtureDb } from "../../test-fixtures";
import { createClickHouseEngine } from "./engine";
import { isUnavailable } from "./errors";

/**
 * The ClickHouse engine when its server cannot be reached (a real connection to a port
 * nothing listens on): every answer is a 503 the routes send as it is, with Retry-After
 * and no address or password; health says unavailable. A query ClickHouse refuses is not
 * an outage (it stays a 500: a bug to see, not to retry).
 */
process.env.AUTH_SECRET ??= "ch-engine-test-secret-at-least-32-characters";
const db = openFixtureDb("ch-engine-down");
const PASSWORD = "pw-that-must-not-leak";

describe("ClickHouse engine, ClickHouse unreachable", async () => {
  const ch = openClickHouse(parseClickHouseConfig(`http://default:${PASSWORD}@127.0.0.1:${await freePort()}/callboard` /* nothing listens there */), { requestTimeoutMs: 5_000 });
  const engine = createClickHouseEngine({ db: () => db, ch });
  const ALL = { appPks: "all" as const };
  afterAll(async () => {
    await ch.close();
    db.$client.close();
  });

  const expect503 = async (answer: Promise<unknown>) => {
    const error = await answer.then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(HttpError);
    const e = error as HttpError;
    expect([e.status, e.code, e.headers]).toEqual([503, "analytics_unavailable", { "Retry-After": "5" }]);
    expect(e.message).not.toMatch(/127\.0\.0\.1|ECONNREFUSED/);
    expect(e.message).not.toContain(PASSWORD);
  };

  it("answers every report, every CSV and one call with a 503 before any byte", async () => {
    for (const name of Object.keys(REPORT_CSV_WRITERS) as Array<keyof typeof REPORT_CSV_WRITERS>) {
      await expect503(engine.report(name, filters(), ALL));
      await expect503(engine.csv(name, filters(), ALL));
    }
    await expect503(engine.call({ app: "app-one", sessionId: "s-1" }, ALL));
  });

  it("says unavailable on health, naming neither the server nor the password", async () => {
    const h = await engine.health();
    expect(h).toMatchObject({ engine: "clickhouse", status: "unavailable" });
    expect(h.detail).not.toMatch(/127\.0\.0\.1|callboard|default/);
    expect(h.detail).not.toContain(PASSWORD);
  });

  it("tells an outage from a refused query", () => {
    expect(isUnavailable(new ClickHouseError("ClickHouse query failed: connect ECONNREFUSED", "ECONNREFUSED"))).toBe(true);
    expect(isUnavailable(new ClickHouseError("ClickHouse query failed: Timeout error."))).toBe(true);
    expect(isUnavailable(new ClickHouseError("ClickHouse query failed: All connection tries failed", "279"))).toBe(true);
    expect(isUnavailable(new ClickHouseError("ClickHouse query failed: Syntax error", "62"))).toBe(false);
    expect(isUnavailable(new Error("ECONNREFUSED"))).toBe(false);
    // Thrown by the other copy of lib/clickhouse/client.ts (the server's modules vs Next's bundle).
    const foreign = Object.assign(new Error("ClickHouse query failed: connect ECONNREFUSED"), { [Symbol.for("callboard.ClickHouseError")]: true, code: "ECONNREFUSED" });
    expect(isUnavailable(foreign)).toBe(true);
  });
});
