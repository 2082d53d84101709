import { describe, expect, it } from "vitest";
import { isoFormatter } from "./iso";

const at = (iso: string) => Date.parse(iso) / 1000;

describe("ISO timestamps in a zone", () => {
  it("writes local time with the zone's offset, across DST and odd offsets", () => {
    expect(isoFormatter()(at("2026-03-05T13:03:09Z"))).toBe("2026-03-05T13:03:09Z");
    const berlin = isoFormatter("Europe/Berlin");
    expect(berlin(at("2026-03-29T00:59:59Z"))).toBe("2026-03-29T01:59:59+01:00");
    expect(berlin(at("2026-03-29T01:00:00Z"))).toBe("2026-03-29T03:00:00+02:00");
    expect(isoFormatter("Asia/Kolkata")(at("2026-03-05T20:00:00Z"))).toBe("2026-03-06T01:30:00+05:30");
    expect(isoFormatter("America/St_Johns")(at("2026-01-10T12:00:00Z"))).toBe("2026-01-10T08:30:00-03:30");
    expect(isoFormatter("UTC")(null)).toBe("");
  });
  it("agrees with Intl on a sweep of instants", () => {
    const f = isoFormatter("America/New_York");
    const parts = new Intl.DateTimeFormat("en-CA", { timeZone: "America/New_York", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" });
    for (let t = at("2026-01-01T00:00:00Z"); t < at("2027-01-01T00:00:00Z"); t += 86_400 * 3 + 3_607) {
      expect(f(t).slice(0, 19).replace("T", ", ")).toBe(parts.format(new Date(t * 1000)));
    }
  });
});
