import { describe, expect, it } from "vitest";
import { dateInputProblem, endDateInput, fromDateInput, localMidnight, matchPreset, presetRange, toDateInput, toEndDateInput } from "./date-range";

const at = (iso: string) => Date.parse(iso) / 1000;

describe("date ranges", () => {
  it("finds local midnight across zones and DST", () => {
    expect(localMidnight(2026, 3, 5, "UTC")).toBe(at("2026-03-05T00:00:00Z"));
    expect(localMidnight(2026, 3, 5, "Asia/Kolkata")).toBe(at("2026-03-04T18:30:00Z"));
    // Berlin switches to summer time on 2026-03-29.
    expect(localMidnight(2026, 3, 30, "Europe/Berlin")).toBe(at("2026-03-29T22:00:00Z"));
    expect(localMidnight(2026, 3, 29, "Europe/Berlin")).toBe(at("2026-03-28T23:00:00Z"));
  });

  it("computes the presets from now in the zone", () => {
    const now = at("2026-03-15T10:00:00Z");
    expect(presetRange("7d", now, "UTC")).toEqual({ from: at("2026-03-09T00:00:00Z"), to: at("2026-03-16T00:00:00Z") });
    expect(presetRange("30d", now, "UTC").from).toBe(at("2026-02-14T00:00:00Z"));
    // Month to date: the 1st through today, never the days still to come.
    expect(presetRange("month", now, "UTC")).toEqual({ from: at("2026-03-01T00:00:00Z"), to: at("2026-03-16T00:00:00Z") });
    expect(presetRange("month", at("2026-12-31T20:00:00Z"), "UTC").to).toBe(at("2027-01-01T00:00:00Z"));
    expect(presetRange("today", now, "UTC")).toEqual({ from: at("2026-03-15T00:00:00Z"), to: at("2026-03-16T00:00:00Z") });
    expect(presetRange("yesterday", now, "Asia/Kolkata")).toEqual({ from: at("2026-03-13T18:30:00Z"), to: at("2026-03-14T18:30:00Z") });
    // 2026-03-15 is a Sunday: last week is Mon Mar 2 – Sun Mar 8; on Monday the 16th, Mar 9–15.
    expect(presetRange("lastWeek", now, "UTC")).toEqual({ from: at("2026-03-02T00:00:00Z"), to: at("2026-03-09T00:00:00Z") });
    expect(presetRange("lastWeek", at("2026-03-16T08:00:00Z"), "UTC")).toEqual({ from: at("2026-03-09T00:00:00Z"), to: at("2026-03-16T00:00:00Z") });
    expect(matchPreset(presetRange("90d", now, "UTC"), now, "UTC")).toBe("90d");
  });

  it("previous month is the calendar month before this one (in the zone)", () => {
    const now = at("2026-03-15T10:00:00Z");
    expect(presetRange("prevMonth", now, "UTC")).toEqual({ from: at("2026-02-01T00:00:00Z"), to: at("2026-03-01T00:00:00Z") });
    // January's previous month is December.
    expect(presetRange("prevMonth", at("2026-01-10T12:00:00Z"), "UTC")).toEqual({ from: at("2025-12-01T00:00:00Z"), to: at("2026-01-01T00:00:00Z") });
    // In Tokyo it is already April 1st: the previous month is March, in Tokyo's midnights.
    expect(presetRange("prevMonth", at("2026-03-31T20:00:00Z"), "Asia/Tokyo")).toEqual({ from: at("2026-02-28T15:00:00Z"), to: at("2026-03-31T15:00:00Z") });
    expect(matchPreset(presetRange("prevMonth", now, "Europe/Berlin"), now, "Europe/Berlin")).toBe("prevMonth");
    expect(matchPreset({ from: null, to: null }, now, "UTC")).toBe("all");
    expect(matchPreset({ from: 1, to: 2 }, now, "UTC")).toBe("custom");
  });

  it("refuses typed dates the API cannot take, with the reason", () => {
    expect(dateInputProblem("2026-11-16", false)).toBeNull();
    expect(dateInputProblem("", false)).toBeNull();
    expect(dateInputProblem("", true)).toMatch(/whole date/);
    expect(dateInputProblem("1906-11-16", false)).toMatch(/1970 to 2100/);
    expect(dateInputProblem("0202-11-16", false)).toMatch(/reads as 202/);
    expect(dateInputProblem("20261-11-16", false)).toMatch(/1970 to 2100/);
  });

  it("round-trips date inputs with an exclusive end", () => {
    const from = fromDateInput("2026-03-01", "America/New_York")!;
    const to = endDateInput("2026-03-31", "America/New_York")!;
    expect(toDateInput(from, "America/New_York")).toBe("2026-03-01");
    expect(toEndDateInput(to, "America/New_York")).toBe("2026-03-31");
    expect(to).toBe(localMidnight(2026, 4, 1, "America/New_York"));
    expect(fromDateInput("nope", "UTC")).toBeNull();
  });
});
