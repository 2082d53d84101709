import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { EnvError, parseEnv } from "@/lib/config/env";
import { parsePostgresConfig } from "./config";

const secret = "p@ss:w/rd'\"%";
const url = `postgres://callboard:${encodeURIComponent(secret)}@pg.example.internal:5433/callboard`;
const clickhouse = "http://default:chpass@127.0.0.1:8123/callboard";
const base = { AUTH_SECRET: "x".repeat(32), CLICKHOUSE_URL: clickhouse };

describe("DATABASE_URL", () => {
  it("is optional: the SQLite file at DATABASE_PATH is the default", () => {
    expect(parseEnv({ AUTH_SECRET: "x".repeat(32) }).DATABASE_URL).toBeUndefined();
  });

  it("accepts postgres:// and postgresql:// with a user and a database, and parses it without showing the password", () => {
    expect(parseEnv({ ...base, DATABASE_URL: url }).DATABASE_URL).toBe(url);
    expect(parseEnv({ ...base, DATABASE_URL: url.replace("postgres:", "postgresql:") }).DATABASE_URL).toBeDefined();
    const config = parsePostgresConfig(url);
    expect(config).toMatchObject({ host: "pg.example.internal", port: 5433, database: "callboard", username: "callboard" });
    expect(config.redacted).toBe("postgres://callboard:***@pg.example.internal:5433/callboard");
    expect(parsePostgresConfig("postgres://u@h/db").port).toBe(5432);
  });

  it.each([
    ["not a url", "must be a URL"],
    [`mysql://u:${encodeURIComponent(secret)}@h:3306/db`, "postgres:// or postgresql://"],
    [`postgres://u:${encodeURIComponent(secret)}@h:5432`, "database name"],
    [`postgres://u:${encodeURIComponent(secret)}@h:5432/`, "database name"],
    [`postgres://:${encodeURIComponent(secret)}@h:5432/db`, "must name a user"],
  ])("refuses %s with a message that never quotes the value", (value, message) => {
    let error: unknown;
    try {
      parseEnv({ ...base, DATABASE_URL: value });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(EnvError);
    expect((error as Error).message).toContain("DATABASE_URL");
    expect((error as Error).message).toContain(message);
    expect((error as Error).message).not.toContain(secret);
    expect((error as Error).message).not.toContain(encodeURIComponent(secret));
  });

  it("needs CLICKHOUSE_URL: several servers must share the facts too", () => {
    expect(() => parseEnv({ AUTH_SECRET: "x".repeat(32), DATABASE_URL: url })).toThrow(/DATABASE_URL: needs CLICKHOUSE_URL/);
  });
});

const run = promisify(execFile);
async function script(file: string, args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ["--import", "tsx", file, ...args], {
      env: { ...process.env, AUTH_SECRET: "x".repeat(32), LOG_LEVEL: "silent", SYNC_INTERVAL_SECONDS: "0", ALERTS_INTERVAL_SECONDS: "0", ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe("a server or command given DATABASE_URL", () => {
  it("refuses to start without CLICKHOUSE_URL, saying so, without quoting the URL", async () => {
    const started = await script("scripts/server.ts", [], { DATABASE_URL: url, CLICKHOUSE_URL: "", PORT: "1" });
    expect(started.code).toBe(1);
    expect(started.stderr).toContain("DATABASE_URL: needs CLICKHOUSE_URL");
    expect(started.stderr + started.stdout).not.toContain(secret);
    expect(started.stderr + started.stdout).not.toContain(encodeURIComponent(secret));
  });

  it("npm run db:migrate with Postgres unreachable exits 1 naming the redacted address, never the password", async () => {
    const closed = `postgres://callboard:${encodeURIComponent(secret)}@127.0.0.1:1/callboard`;
    const result = await script("scripts/migrate.ts", [], { DATABASE_URL: closed, CLICKHOUSE_URL: clickhouse });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("Postgres at postgres://callboard:***@127.0.0.1:1/callboard cannot be reached");
    expect(result.stderr + result.stdout).not.toContain(secret);
    expect(result.stderr + result.stdout).not.toContain(encodeURIComponent(secret));
  });

  it.each([
    ["npm start", "scripts/server.ts", []],
    ["npm run users -- list", "scripts/users.ts", ["list"]],
    ["npm run sync", "scripts/sync.ts", []],
  ])("%s with Postgres unreachable exits 1 naming the redacted address, never the password, and keeps no SQLite file of its own", async (_name, file, args) => {
    const result = await script(file, args, { DATABASE_URL: url, CLICKHOUSE_URL: clickhouse, PORT: "1", DATABASE_PATH: "/nonexistent-dir/callboard.db" });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("Postgres at postgres://callboard:***@pg.example.internal:5433/callboard cannot be reached");
    expect(result.stderr + result.stdout).not.toContain(secret);
    expect(result.stderr + result.stdout).not.toContain(encodeURIComponent(secret));
  });
});
