import { describe, expect, it } from "vitest";
import { chartDays, daysWindow, eventsWindow, MAX_CHART_DAYS } from "./events-params";

const at = (iso: string) => Date.parse(iso) / 1000;
const NOW = Date.parse("2026-03-29T10:00:00Z");

describe("the events pages' period", () => {
  it("takes from/to as the filter bar sets them, never past now", () => {
    const w = eventsWindow({ from: at("2026-03-01T00:00:00Z"), to: at("2026-04-01T00:00:00Z"), tz: "UTC" }, NOW);
    expect(w).toEqual({ from: at("2026-03-01T00:00:00Z"), to: NOW / 1000 + 1, allTime: false });
    expect(chartDays(w, undefined, "UTC")).toHaveLength(29);
  });

  it("reads the older days=N as the last N local days, as the presets write them (DST day included)", () => {
    expect(daysWindow(7, "Europe/Berlin", NOW)).toEqual({ from: at("2026-03-22T23:00:00Z"), to: at("2026-03-29T22:00:00Z") });
    const w = eventsWindow({ days: 7, tz: "Europe/Berlin" }, NOW);
    expect(chartDays(w, undefined, "Europe/Berlin")).toEqual(["2026-03-23", "2026-03-24", "2026-03-25", "2026-03-26", "2026-03-27", "2026-03-28", "2026-03-29"]);
  });

  it("all time starts the chart at the first counted day, and draws at most a year of days", () => {
    const w = eventsWindow({ tz: "UTC" }, NOW);
    expect(w.allTime).toBe(true);
    expect(chartDays(w, "2026-03-27", "UTC")).toEqual(["2026-03-27", "2026-03-28", "2026-03-29"]);
    expect(chartDays(w, "2020-01-01", "UTC")).toHaveLength(MAX_CHART_DAYS);
    expect(chartDays(w, undefined, "UTC")).toEqual(["2026-03-29"]);
  });
});
