import { describe, expect, it } from "vitest";
import { csvDownloadName } from "./csv-filename";
import { filters } from "./filters";

const at = (iso: string) => Date.parse(iso) / 1000;

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

  it("leave the range out where the report names its own period", () => {
    expect(csvDownloadName("statements-2026-10", filters({ apps: ["acme"], tz: "Europe/Berlin" }), now, { range: false })).toBe("callboard-statements-2026-10_acme_as-of_2026-11-24_Europe-Berlin.csv");
  });
  it("names the participants search on the participants reports only", () => {
    expect(csvDownloadName("participants", filters({ person: "Ali" }), now)).toBe("callboard-participants_person-Ali_all-time_as-of_2026-11-24.csv");
    // The heatmap drill-down's weekday / hour.
    expect(csvDownloadName("calls", filters({ weekday: 1, hour: 9 }), now)).toBe("callboard-calls_running-mon-09h_all-time_as-of_2026-11-24.csv");
    expect(csvDownloadName("calls", filters({ hour: 23 }), now)).toBe("callboard-calls_running-23h_all-time_as-of_2026-11-24.csv");
    expect(csvDownloadName("calls", filters({ person: "Ali" }), now)).toBe("callboard-calls_all-time_as-of_2026-11-24.csv");
  });
});
