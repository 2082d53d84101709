import { describe, expect, it } from "vitest";
import { parseFilters } from "@/lib/analytics/filters";
import { appsParam, tzParam } from "./params";

/** The ops pages' parameters and the reports' filters take the same apps and zones. */
const ids = (n: number) => Array.from({ length: n }, (_, i) => `app-${i}`);

describe("ops parameters", () => {
  it("take as many apps as the report filters, and refuse one more", () => {
    expect(appsParam.parse(ids(100))).toHaveLength(100);
    expect(parseFilters(new URLSearchParams(ids(100).map((a) => ["app", a]))).apps).toHaveLength(100);
    expect(() => appsParam.parse(ids(101))).toThrow(/at most 100 apps/);
    expect(() => parseFilters(new URLSearchParams(ids(101).map((a) => ["app", a])))).toThrow(/at most 100 apps/);
  });

  it("take the zones the report filters take", () => {
    for (const tz of ["UTC", "Asia/Kathmandu", "America/New_York"]) {
      expect(tzParam.parse(tz)).toBe(tz);
      expect(parseFilters({ tz }).tz).toBe(tz);
    }
    expect(tzParam.parse("")).toBe("UTC");
    for (const tz of ["Not/AZone", "x".repeat(65)]) {
      expect(() => tzParam.parse(tz)).toThrow();
      expect(() => parseFilters({ tz })).toThrow();
    }
  });
});
