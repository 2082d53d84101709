import { describe, expect, it } from "vitest";
import { InvalidEventError, parseLive, parseRecording, toEpochSeconds, triggerCategory } from "@/lib/platform/webhook-envelope";
import { canonicalJson } from "./keys";
import { checkBasicAuth, parseBasic } from "./auth";

describe("toEpochSeconds", () => {
  it.each([
    [1_700_000_000, 1_700_000_000],
    ["1700000000", 1_700_000_000],
    [1_700_000_000_123, 1_700_000_000],
    ["1700000000123", 1_700_000_000],
    [1_700_000_000.9, 1_700_000_000],
    ["  12 ", 12],
    [-5, null],
    ["soon", null],
    [null, null],
    [Number.NaN, null],
    [true, null],
  ])("%j → %j", (input, out) => {
    expect(toEpochSeconds(input)).toBe(out);
  });
});

describe("parsing", () => {
  it("reads a recording with string numbers", () => {
    expect(parseRecording({ sessionId: "s", startTime: "1700000000", duration: "12.5", recording_url: "https://r.example.test/u", recordingDate: "2023-11-14" })).toEqual({
      sessionId: "s", startTime: 1_700_000_000, recordingUrl: "https://r.example.test/u", recordingDate: "2023-11-14", duration: 12.5,
    });
    expect(() => parseRecording({ startTime: 1, recording_url: "u" })).toThrow(InvalidEventError);
  });

  it("keeps a recording whose duration is impossible, with the duration unknown", () => {
    const rec = (duration: unknown) => parseRecording({ sessionId: "s", startTime: 1_700_000_000, duration, recording_url: "https://r.example.test/u" }).duration;
    expect([rec("-61.5"), rec(-1), rec("1e300"), rec(1e300), rec(Infinity), rec("6000000001")]).toEqual([null, null, null, null, null, null]);
    expect([rec("0"), rec(61.5), rec("6000000000")]).toEqual([0, 61.5, 6_000_000_000]);
  });

  it("reads call_ended occupants from an array or a map", () => {
    const occ = { name: "A", joined_at: 1, left_at: 2, audio_call: "true" };
    const a = parseLive("call_ended", "call", { sessionId: "s", destroyed_at: "1700000000000", all_occupants: [occ] });
    const b = parseLive("meeting_ended", "meet", { sessionId: "s", destroyed_at: 1_700_000_000, all_occupants: { x: occ } });
    expect(a.endedAt).toBe(1_700_000_000);
    expect(a.occupants).toEqual(b.occupants);
    expect(b.kind).toBe("meet");
  });

  it("classifies triggers", () => {
    expect(triggerCategory("message_sent")).toBe("chat");
    expect(triggerCategory("meeting_started")).toBe("meeting");
    expect(triggerCategory("recording_generated")).toBe("recording");
    expect(triggerCategory("something_new")).toBe("unknown");
  });

  it("canonicalises JSON with sorted keys", () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: "x" }] })).toBe(canonicalJson({ a: [{ c: "x", d: 2 }], b: 1 }));
  });
});

describe("Basic auth", () => {
  it("parses only Basic with a colon", () => {
    expect(parseBasic(`Basic ${Buffer.from("u:p").toString("base64")}`)?.toString()).toBe("u:p");
    expect(parseBasic("Bearer x")).toBeNull();
    expect(parseBasic(undefined)).toBeNull();
  });

  it("refuses when the app has no credentials stored", () => {
    expect(checkBasicAuth(`Basic ${Buffer.from("u:p").toString("base64")}`, { username: null, passwordEnc: null })).toBe(false);
  });
});
