import { describe, expect, it } from "vitest";
import { formatMinutesTick, niceTicks } from "./ticks";

describe("axis ticks", () => {
  it("counts: 0 and steps of 1, 2 or 5 × 10ⁿ up to the maximum", () => {
    expect(niceTicks(2200)).toEqual([0, 1000, 2000, 3000]);
    expect(niceTicks(12)).toEqual([0, 5, 10, 15]);
    expect(niceTicks(140)).toEqual([0, 50, 100, 150]);
    expect(niceTicks(3)).toEqual([0, 1, 2, 3]);
    expect(niceTicks(0)).toEqual([0, 1]);
    expect(niceTicks(340)).toEqual([0, 100, 200, 300, 400]);
  });
  it("minutes: whole minutes, then whole hours", () => {
    expect(niceTicks(2000, "minutes")).toEqual([0, 600, 1200, 1800, 2400]);
    expect(niceTicks(42, "minutes")).toEqual([0, 15, 30, 45]);
    expect(niceTicks(4213, "minutes").map(formatMinutesTick)).toEqual(["0", "20h", "40h", "60h", "80h"]);
    expect(niceTicks(7, "minutes").map(formatMinutesTick)).toEqual(["0", "2m", "4m", "6m", "8m"]);
  });
  it("survives any value: huge, the largest double, infinite, NaN, zero, negative", () => {
    expect(niceTicks(1e300)).toEqual([0, 5e299, 1e300]);
    for (const unit of ["count", "minutes"] as const) {
      for (const max of [1e17, 1e20, 1e300, Number.MAX_VALUE, 123456789012345678]) {
        const ticks = niceTicks(max, unit);
        expect(ticks.length, `${unit} ${max}`).toBeGreaterThanOrEqual(2);
        expect(ticks.length, `${unit} ${max}`).toBeLessThanOrEqual(5);
        expect(ticks.every(Number.isFinite), `${unit} ${max}`).toBe(true);
        expect(ticks[ticks.length - 1], `${unit} ${max}`).toBeGreaterThanOrEqual(max);
        expect(ticks.map(formatMinutesTick).every((t) => typeof t === "string")).toBe(true);
      }
      for (const max of [0, -5, Number.NaN, Infinity, -Infinity]) expect(niceTicks(max, unit)).toEqual([0, 1]);
    }
  });
  it("writes minute ticks in the tooltips' units", () => {
    expect(formatMinutesTick(0)).toBe("0");
    expect(formatMinutesTick(45)).toBe("45m");
    expect(formatMinutesTick(120)).toBe("2h");
    expect(formatMinutesTick(90)).toBe("1h 30m");
    expect(formatMinutesTick(120_000)).toBe("2,000h");
  });
});
