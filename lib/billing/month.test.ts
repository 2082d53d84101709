import { describe, expect, it } from "vitest";
import { addMonths, firstInstantAtOrAfter, isMonth, monthOf, monthRange } from "./month";

const utc = (iso: string) => Date.parse(iso) / 1000;

describe("monthRange", () => {
  it("UTC months are calendar months", () => {
    expect(monthRange("2026-02", "UTC")).toMatchObject({ from: utc("2026-02-01T00:00:00Z"), to: utc("2026-03-01T00:00:00Z") });
    expect(monthRange("2024-12", "UTC").to).toBe(utc("2025-01-01T00:00:00Z"));
  });

  it("Asia/Kathmandu (+05:45) starts 5 h 45 min before UTC midnight", () => {
    const r = monthRange("2026-03", "Asia/Kathmandu");
    expect(r.from).toBe(utc("2026-02-28T18:15:00Z"));
    expect(r.to).toBe(utc("2026-03-31T18:15:00Z"));
  });

  it("DST months are an hour shorter or longer (Europe/Berlin, America/New_York)", () => {
    const march = monthRange("2026-03", "Europe/Berlin");
    expect(march.from).toBe(utc("2026-02-28T23:00:00Z")); // CET
    expect(march.to).toBe(utc("2026-03-31T22:00:00Z")); // CEST
    expect(march.to - march.from).toBe(31 * 86_400 - 3600);
    const november = monthRange("2026-11", "America/New_York");
    expect(november.from).toBe(utc("2026-11-01T04:00:00Z")); // EDT; clocks go back later that night
    expect(november.to - november.from).toBe(30 * 86_400 + 3600);
  });

  it("a month whose local midnight does not exist starts when the clock jumps (America/Asuncion 2023-10-01)", () => {
    // 00:00 → 01:00 on 2023-10-01: the month starts at 01:00 -03, i.e. 04:00 UTC.
    const r = monthRange("2023-10", "America/Asuncion");
    expect(r.from).toBe(utc("2023-10-01T04:00:00Z"));
    expect(monthRange("2023-09", "America/Asuncion").to).toBe(r.from);
  });

  it("consecutive months tile the time line", () => {
    for (const tz of ["Asia/Kathmandu", "Europe/Berlin", "America/Asuncion", "Australia/Lord_Howe", "Pacific/Chatham"]) {
      let month = "2023-01";
      for (let i = 0; i < 30; i++) {
        const next = addMonths(month, 1);
        const r = monthRange(month, tz);
        expect(monthRange(next, tz).from).toBe(r.to);
        expect(monthOf(r.from, tz)).toBe(month);
        expect(monthOf(r.to - 1, tz)).toBe(month);
        month = next;
      }
    }
  });

  it("refuses what is not a month or a zone", () => {
    expect(isMonth("2026-13")).toBe(false);
    expect(isMonth("2026-1")).toBe(false);
    expect(() => monthRange("2026-00", "UTC")).toThrow(/not a month/);
    expect(() => monthRange("2026-01", "Mars/Base")).toThrow(/time zone/);
  });

  it("firstInstantAtOrAfter picks the first of a repeated wall time", () => {
    // Europe/Berlin 2026-10-25 02:30 happens twice; the first is 00:30 UTC.
    expect(firstInstantAtOrAfter("Europe/Berlin", utc("2026-10-25T02:30:00Z"))).toBe(utc("2026-10-25T00:30:00Z"));
  });

  it("addMonths crosses years", () => {
    expect(addMonths("2026-12", 1)).toBe("2027-01");
    expect(addMonths("2026-01", -1)).toBe("2025-12");
  });
});
