import { describe, expect, it } from "vitest";
import { jsonDepth, MAX_RAW_DEPTH, parseRawRecord } from "./raw-record";

const nested = (depth: number) => `{"sessionId":"s1","extra":${"[".repeat(depth)}1${"]".repeat(depth)}}`;

describe("the raw record of a call", () => {
  it("measures nesting on the text, strings skipped", () => {
    expect(jsonDepth('{"a":[1,{"b":2}]}')).toBe(3);
    expect(jsonDepth('{"a":"[[[[{{{\\"]]"}')).toBe(1);
    expect(jsonDepth(nested(50_000))).toBe(50_001);
  });

  it("parses a real record as it was received", () => {
    const text = '{"sessionId":"s1","participants":[{"uid":"u","x":{"y":1}}],"unknown":"kept"}';
    expect(parseRawRecord(text)).toEqual(JSON.parse(text));
    expect(parseRawRecord(nested(MAX_RAW_DEPTH - 1))).toEqual(JSON.parse(nested(MAX_RAW_DEPTH - 1)));
    expect(parseRawRecord("[1]")).toBeNull();
    expect(parseRawRecord("{nope")).toBeNull();
    expect(parseRawRecord(null)).toBeNull();
  });

  it("shows a record nested deeper than any real one as text, which every serialiser can handle", () => {
    const text = nested(50_000);
    // What the page and the API did with it before: the stack overflows.
    expect(() => JSON.stringify(JSON.parse(text), null, 2)).toThrow(RangeError);
    const shown = parseRawRecord(text)!;
    expect(shown.note).toMatch(/nests deeper than 64 levels/);
    expect(shown.text).toBe(text.slice(0, 4096));
    expect(() => JSON.stringify(shown, null, 2)).not.toThrow();
  });
});
