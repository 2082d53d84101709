import { describe, expect, it } from "vitest";
import { comparisonRange } from "./compare-range";

const at = (iso: string) => Date.parse(iso) / 1000;

describe("comparison periods", () => {
  it("month to date is compared with the same days of the previous month", () => {
    expect(comparisonRange({ from: at("2026-11-01T00:00:00Z"), to: at("2026-11-29T00:00:00Z") }, "UTC")).toEqual({ from: at("2026-10-01T00:00:00Z"), to: at("2026-10-29T00:00:00Z") });
    // In the zone: Kolkata's Nov 1–3 against its Oct 1–3.
    expect(comparisonRange({ from: at("2026-10-31T18:30:00Z"), to: at("2026-11-03T18:30:00Z") }, "Asia/Kolkata")).toEqual({ from: at("2026-09-30T18:30:00Z"), to: at("2026-10-03T18:30:00Z") });
    // A whole 31-day month against the whole shorter month before it, never past its end.
    expect(comparisonRange({ from: at("2026-03-01T00:00:00Z"), to: at("2026-04-01T00:00:00Z") }, "UTC")).toEqual({ from: at("2026-02-01T00:00:00Z"), to: at("2026-03-01T00:00:00Z") });
  });

  it("any other range is compared with the equally long period just before it", () => {
    expect(comparisonRange({ from: at("2026-11-10T00:00:00Z"), to: at("2026-11-17T00:00:00Z") }, "UTC")).toEqual({ from: at("2026-11-03T00:00:00Z"), to: at("2026-11-10T00:00:00Z") });
  });

  it("the same period last year uses the same calendar dates in the zone", () => {
    expect(comparisonRange({ from: at("2026-11-01T00:00:00Z"), to: at("2026-11-29T00:00:00Z") }, "UTC", "year")).toEqual({ from: at("2025-11-01T00:00:00Z"), to: at("2025-11-29T00:00:00Z") });
    // New York: Nov 1 2026 starts in summer time (EDT), Nov 1 2025 too; Mar 10 is after the change in 2026 but not in 2025.
    expect(comparisonRange({ from: at("2026-03-10T04:00:00Z"), to: at("2026-03-11T04:00:00Z") }, "America/New_York", "year")).toEqual({ from: at("2025-03-10T04:00:00Z"), to: at("2025-03-11T04:00:00Z") });
  });
});
