import { afterAll, describe, expect, it } from "vitest";
import { parseEnv } from "@/lib/config/env";
import { createEngine, engineKind, EngineUnavailableError } from "./engine";
import { filters } from "./filters";
import { openFixtureDb } from "./test-fixtures";

/** Which engine a process gets, from its environment. */
const SECRET = "engine-test-secret-at-least-32-characters";
const db = openFixtureDb("engine-selection");
afterAll(() => db.$client.close());

describe("analytics engine selection", () => {
  it("is the memory engine by default, ClickHouse when CLICKHOUSE_URL is set", () => {
    expect(engineKind(parseEnv({ AUTH_SECRET: SECRET }))).toBe("memory");
    expect(engineKind(parseEnv({ AUTH_SECRET: SECRET, CLICKHOUSE_URL: "" }))).toBe("memory");
    expect(engineKind(parseEnv({ AUTH_SECRET: SECRET, CLICKHOUSE_URL: "http://callboard:s3cret@127.0.0.1:8123/callboard" }))).toBe("clickhouse");
  });

  it("refuses a CLICKHOUSE_URL that is not an http(s) URL, without echoing it", () => {
    expect(() => parseEnv({ AUTH_SECRET: SECRET, CLICKHOUSE_URL: "tcp://u:pw-in-url@host:9000/db" })).toThrow(/CLICKHOUSE_URL/);
    try {
      parseEnv({ AUTH_SECRET: SECRET, CLICKHOUSE_URL: "tcp://u:pw-in-url@host:9000/db" });
    } catch (e) {
      expect(String(e)).not.toContain("pw-in-url");
    }
  });

  it("builds the memory engine, which answers a report", async () => {
    const engine = createEngine({ db: () => db, env: parseEnv({ AUTH_SECRET: SECRET, ANALYTICS_WORKER: "off" }) });
    expect(engine.kind).toBe("memory");
    expect((await engine.report("totals", filters(), { appPks: "all" })).current.calls).toBe(0);
    await engine.close();
  });

  it("says what to do when CLICKHOUSE_URL asks for an engine this build does not have, and names no secret", () => {
    const env = parseEnv({ AUTH_SECRET: SECRET, CLICKHOUSE_URL: "https://callboard:s3cret@ch.example:8443/callboard" });
    let error: unknown;
    try {
      // This build's memory engine only (a build with the ClickHouse engine registers it beside).
      createEngine({ db: () => db, env }, { memory: () => createEngine({ db: () => db, env: parseEnv({ AUTH_SECRET: SECRET }) }) });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(EngineUnavailableError);
    expect(String(error)).toMatch(/unset CLICKHOUSE_URL/);
    expect(String(error)).not.toContain("s3cret");
  });
});
