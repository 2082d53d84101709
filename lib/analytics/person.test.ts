import { describe, expect, it } from "vitest";
import { personMatcher } from "./person";
import { parseFilters } from "./filters";

describe("person search", () => {
  it("matches a part of the uid, ASCII letters in either case", () => {
    const m = personMatcher("Ali")!;
    expect(["alice", "user-ALIx", "bob", "mali"].filter(m)).toEqual(["alice", "user-ALIx", "mali"]);
  });
  it("folds only ASCII (as ClickHouse's positionCaseInsensitive does)", () => {
    expect(personMatcher("É")!("é")).toBe(false);
    expect(personMatcher("é")!("xéy")).toBe(true);
  });
  it("is absent when empty", () => {
    expect(personMatcher(undefined)).toBeUndefined();
    expect(parseFilters(new URLSearchParams("person=%20%20")).person).toBeUndefined();
    expect(parseFilters(new URLSearchParams("person=%20bob%20")).person).toBe("bob");
  });
  it("refuses a text longer than 256 characters, naming the parameter", () => {
    expect(() => parseFilters(new URLSearchParams(`person=${"x".repeat(257)}`))).toThrow(/person/);
  });
});
