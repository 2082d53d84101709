import { describe, expect, it } from "vitest";
import type { Totals } from "@/lib/analytics/report-types";
import { compareApp } from "./apps-compare";

const totals = (t: Partial<Totals>): Totals => ({
  calls: 0, audioMinutes: 0, videoMinutes: 0, totalMinutes: 0, avgDurationSeconds: 0, avgParticipants: 0, recordingShare: 0, unansweredRate: 0, ...t,
});

describe("tenant apps compared", () => {
  it("gives each app its rates, averages and change against the previous period", () => {
    const row = compareApp(
      { appId: "acme", name: "Acme" },
      { current: totals({ calls: 200, totalMinutes: 900, avgDurationSeconds: 330, avgParticipants: 3, unansweredRate: 0.1 }), previous: totals({ calls: 160, totalMinutes: 1000, avgDurationSeconds: 300, avgParticipants: 3, unansweredRate: 0.125 }), previousRange: { from: 0, to: 1 } },
      [{ dimension: "status", value: "rejected", calls: 30, audioMinutes: 0, videoMinutes: 0, totalMinutes: 0 }, { dimension: "type", value: "rejected", calls: 99, audioMinutes: 0, videoMinutes: 0, totalMinutes: 0 }],
    );
    expect(row.rejectedRate).toBe(0.15);
    expect(row.callsChange.label).toBe("▲ 25%");
    expect(row.minutesChange.direction).toBe("down");
    expect(row.avgDurationChange.label).toBe("▲ 10%");
    expect(row.avgParticipantsChange.label).toBe("no change");
    expect(row.unansweredChange.label).toBe("▼ 2.5 pt");
  });

  it("says nothing about change without a previous period, and no rate without calls", () => {
    const row = compareApp({ appId: "x", name: "" }, { current: totals({}), previous: null, previousRange: null }, []);
    expect(row.name).toBe("x");
    expect(row.rejectedRate).toBe(0);
    expect(row.callsChange.direction).toBe("none");
  });
});
