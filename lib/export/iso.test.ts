import { describe, expect, it } from "vitest";
import { filters } from "@/lib/analytics/filters";
import { csvDownloadName } from "./filename";
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

describe("CSV file names", () => {
  const now = new Date("2026-11-24T10:00:00Z");
  it("carry the report, the filters and the range (last day inclusive, in the zone)", () => {
    expect(csvDownloadName("calls", filters({ apps: ["acme-sales"], type: "video", from: at("2026-01-01T00:00:00Z"), to: at("2026-02-01T00:00:00Z") }), now)).toBe(
      "callboard-calls_acme-sales_video_2026-01-01_to_2026-01-31.csv",
    );
    expect(csvDownloadName("daily", filters({ tz: "Asia/Kolkata", from: at("2025-12-31T18:30:00Z") }), now)).toBe("callboard-daily_2026-01-01_to_2026-11-24_Asia-Kolkata.csv");
    expect(csvDownloadName("participants", filters({ hasRecording: false, uid: "=x y" }), now)).toBe("callboard-participants_not-recorded_uid-x-y_all-time_as-of_2026-11-24.csv");
    expect(csvDownloadName("apps", filters({ apps: ["d", "c", "b", "a"], to: at("2026-03-01T00:00:00Z") }), now)).toBe("callboard-apps_4-apps_up-to_2026-02-28.csv");
  });
});
