import { describe, expect, it } from "vitest";
import { parseEnv } from "@/lib/config/env";
import { forHost, parseClickHouseConfig, scrubSecret } from "./config";

const base = { AUTH_SECRET: "x".repeat(32) };
const secret = "p@ss:w/rd'\"%";
const url = `https://reporter:${encodeURIComponent(secret)}@ch.example.internal:8443/callboard`;

describe("CLICKHOUSE_URL and CLICKHOUSE_CLUSTER", () => {
  it("are optional: the embedded engine is the default", () => {
    const e = parseEnv(base);
    expect(e.CLICKHOUSE_URL).toBeUndefined();
    expect(e.CLICKHOUSE_CLUSTER).toBeUndefined();
  });

  it("accept an http(s) URL with credentials and a database, and a cluster name", () => {
    const e = parseEnv({ ...base, CLICKHOUSE_URL: url, CLICKHOUSE_CLUSTER: "main_cluster" });
    expect(e.CLICKHOUSE_URL).toBe(url);
    expect(e.CLICKHOUSE_CLUSTER).toBe("main_cluster");
  });

  it.each([
    ["not a url", "must be a URL"],
    [`ftp://u:${encodeURIComponent(secret)}@h:21/db`, "http:// or https://"],
    [`http://u:${encodeURIComponent(secret)}@h:8123`, "database name"],
    [`http://u:${encodeURIComponent(secret)}@h:8123/`, "database name"],
    [`http://u:${encodeURIComponent(secret)}@h:8123/db-name`, "letters, digits and _"],
    [`http://u:${encodeURIComponent(secret)}@h:8123/a/b`, "letters, digits and _"],
    [`http://u:${encodeURIComponent(secret)}@h:8123/db?x=1`, "query string"],
  ])("refuse %s with a message that never quotes the value", (value, message) => {
    let error: Error | undefined;
    try {
      parseEnv({ ...base, CLICKHOUSE_URL: value });
    } catch (e) {
      error = e as Error;
    }
    expect(error?.message).toContain("CLICKHOUSE_URL");
    expect(error?.message).toContain(message);
    expect(error?.message).not.toContain(secret);
    expect(error?.message).not.toContain(encodeURIComponent(secret));
  });

  it("refuse a cluster without a URL, or a cluster name that is not an identifier", () => {
    expect(() => parseEnv({ ...base, CLICKHOUSE_CLUSTER: "c1" })).toThrow(/CLICKHOUSE_CLUSTER: needs CLICKHOUSE_URL/);
    expect(() => parseEnv({ ...base, CLICKHOUSE_URL: url, CLICKHOUSE_CLUSTER: "c1; DROP" })).toThrow(/CLICKHOUSE_CLUSTER/);
  });
});

describe("parseClickHouseConfig", () => {
  it("splits the URL into what the client needs, with a redacted form for logs", () => {
    const c = parseClickHouseConfig(url, "c1");
    expect(c).toMatchObject({ origin: "https://ch.example.internal:8443", username: "reporter", password: secret, database: "callboard", cluster: "c1" });
    expect(c.redacted).toBe("https://reporter:***@ch.example.internal:8443/callboard");
    expect(c.redacted).not.toContain(encodeURIComponent(secret));
  });

  it("defaults the user to `default` and redacts nothing when there is no password", () => {
    const c = parseClickHouseConfig("http://localhost:8123/cb");
    expect(c).toMatchObject({ username: "default", password: "", redacted: "http://default@localhost:8123/cb" });
  });

  it("points at another host of the cluster with the same scheme, port and credentials", () => {
    const h = forHost(parseClickHouseConfig(url, "c1"), "10.0.0.7");
    expect(h.origin).toBe("https://10.0.0.7:8443");
    expect(h.password).toBe(secret);
    expect(h.redacted).toBe("https://reporter:***@10.0.0.7:8443/callboard");
  });

  it("scrubs the password, raw or URL-encoded, from any text", () => {
    expect(scrubSecret(`failed ${url} with ${secret}`, secret)).toBe("failed https://reporter:***@ch.example.internal:8443/callboard with ***");
    expect(scrubSecret("nothing to hide", "")).toBe("nothing to hide");
  });
});
