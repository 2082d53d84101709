import { describe, expect, it } from "vitest";
import { label } from "@/lib/platform/labels";
import { change, changePoints, formatCount, formatDateTime, formatDay, formatMinutes, formatPercent, formatSeconds, formatWindow } from "./format";

describe("formatters", () => {
  it("formats counts and percentages for people", () => {
    expect(formatCount(1234567)).toBe("1,234,567");
    expect(formatCount(null)).toBe("—");
    expect(formatPercent(0.1234)).toBe("12.3%");
    expect(formatPercent(0)).toBe("0%");
  });

  it("formats minutes as hours and minutes", () => {
    expect(formatMinutes(0)).toBe("0m");
    expect(formatMinutes(0.2)).toBe("<1m");
    expect(formatMinutes(59.6)).toBe("1h 0m");
    expect(formatMinutes(75.5)).toBe("1h 16m");
    expect(formatMinutes(12345)).toBe("205h 45m");
    expect(formatMinutes(100_000)).toBe("1,666h 40m");
    expect(formatMinutes(Number.NaN)).toBe("—");
  });

  it("formats seconds as a duration", () => {
    expect(formatSeconds(5)).toBe("5s");
    expect(formatSeconds(65)).toBe("1m 05s");
    expect(formatSeconds(3723)).toBe("1h 02m 03s");
  });

  it("formats instants in the chosen zone", () => {
    const t = Date.UTC(2026, 2, 5, 23, 30) / 1000;
    expect(formatDateTime(t, "UTC")).toBe("Mar 5, 2026, 23:30");
    expect(formatDateTime(t, "Asia/Kolkata")).toBe("Mar 6, 2026, 05:00");
    expect(formatDateTime(t, "Asia/Kolkata", { zoneName: true })).toBe("Mar 6, 2026, 05:00 GMT+5:30");
    expect(formatDateTime(t, "UTC", { seconds: true, zoneName: true })).toBe("Mar 5, 2026, 23:30:00 UTC");
    expect(formatDay("2026-03-05")).toBe("Mar 5");
    expect(formatDay("2026-03-05", true)).toBe("Mar 5, 2026");
  });

  it("describes a change against the previous period", () => {
    expect(change(110, 100)).toMatchObject({ label: "▲ 10%", direction: "up" });
    expect(change(90, 100)).toMatchObject({ label: "▼ 10%", direction: "down" });
    expect(change(5, 0)).toMatchObject({ label: "new", direction: "up" });
    expect(change(0, 0)).toMatchObject({ label: "no change", direction: "flat" });
    expect(change(5, null)).toMatchObject({ label: "—", direction: "none" });
    expect(changePoints(0.25, 0.2)).toMatchObject({ label: "▲ 5 pt", direction: "up" });
  });

  it("labels enumerations", () => {
    expect(label("meet")).toBe("Meeting");
    expect(label("receiverType")).toBe("Receiver type");
    expect(label("something-new")).toBe("something-new");
    expect(label(null)).toBe("—");
  });
});

describe("formatWindow", () => {
  const t = (iso: string) => Date.parse(iso) / 1000;
  it("names the end's time only within one day, without seconds", () => {
    expect(formatWindow(t("2026-11-27T02:00:00Z"), t("2026-11-27T03:00:00Z"))).toBe("Nov 27, 2026, 02:00 – 03:00");
  });
  it("names both ends whole when the window ends on another day (a day's window ends at the next midnight)", () => {
    expect(formatWindow(t("2026-11-26T00:00:00Z"), t("2026-11-27T00:00:00Z"))).toBe("Nov 26, 2026, 00:00 – Nov 27, 2026, 00:00");
    expect(formatWindow(t("2026-11-26T23:00:00Z"), t("2026-11-27T00:00:00Z"))).toBe("Nov 26, 2026, 23:00 – Nov 27, 2026, 00:00");
  });
  it("reads the days in the zone asked", () => {
    expect(formatWindow(t("2026-11-26T18:30:00Z"), t("2026-11-26T19:30:00Z"), "Asia/Kolkata")).toBe("Nov 27, 2026, 00:00 – 01:00");
  });
});
