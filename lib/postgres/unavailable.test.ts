import { DrizzleQueryError } from "drizzle-orm/errors";
import { describe, expect, it } from "vitest";
import { isPostgresUnavailable } from "./unavailable";

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

/** Which failures mean "Postgres is out of reach" (503 + Retry-After) and which are a query refused (500). */
describe("isPostgresUnavailable", () => {
  it("recognises a server that is down, restarting or full, also inside drizzle's wrapper", () => {
    for (const e of [
      withCode("connect ECONNREFUSED 127.0.0.1:5432", "ECONNREFUSED"),
      withCode("terminating connection due to administrator command", "57P01"),
      withCode("the database system is starting up", "57P03"),
      withCode("sorry, too many clients already", "53300"),
      withCode("connection failure", "08006"),
      new Error("Connection terminated unexpectedly"),
      new Error("timeout exceeded when trying to connect"),
      new AggregateError([withCode("connect ECONNREFUSED ::1:5432", "ECONNREFUSED")], "all addresses failed"),
    ]) {
      expect(isPostgresUnavailable(e)).toBe(true);
      expect(isPostgresUnavailable(new DrizzleQueryError("select 1", [], e))).toBe(true);
    }
  });

  it("leaves a query Postgres refused, and anything else, to the 500", () => {
    for (const e of [
      withCode('duplicate key value violates unique constraint "apps_app_id_unique"', "23505"),
      withCode('syntax error at or near "SELEC"', "42601"),
      withCode("database or disk is full", "SQLITE_FULL"),
      new TypeError("Cannot read properties of undefined"),
      "a string",
      undefined,
    ]) {
      expect(isPostgresUnavailable(e)).toBe(false);
      if (e instanceof Error) expect(isPostgresUnavailable(new DrizzleQueryError("select 1", [], e))).toBe(false);
    }
  });
});
