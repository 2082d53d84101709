import { describe, expect, it } from "vitest";
import type { BreakdownRow, CallDetail, HeatmapCell, TotalsReport } from "@/lib/analytics";
import { appTrend, breakdownGroups, callTimeline, dailySeries, durationSeries, engagementSeries, heatmapGrid, kpiTiles, participantMinutes, timelineTicks } from "./charts";

const totals = (calls: number, extra: Partial<TotalsReport["current"]> = {}) => ({
  calls, audioMinutes: 90, videoMinutes: 30, totalMinutes: 120, avgDurationSeconds: 65, avgParticipants: 2.5, recordingShare: 0.25, unansweredRate: 0.1, ...extra,
});

describe("chart mappers", () => {
  it("builds KPI tiles with changes against the previous period", () => {
    const tiles = kpiTiles({ current: totals(110), previous: totals(100, { recordingShare: 0.2, unansweredRate: 0.15 }), previousRange: { from: 0, to: 10 } });
    expect(tiles.map((t) => t.key)).toEqual(["calls", "audioMinutes", "videoMinutes", "avgDurationSeconds", "avgParticipants", "recordingShare", "unansweredRate"]);
    expect(tiles[0]).toMatchObject({ value: "110", previous: "100", change: { label: "▲ 10%" } });
    expect(tiles[1].value).toBe("1h 30m");
    expect(tiles[3].value).toBe("1m 05s");
    expect(tiles[5].change.label).toBe("▲ 5 pt");
    expect(tiles[6]).toMatchObject({ higherIsBetter: false, change: { direction: "down" } });
    const alone = kpiTiles({ current: totals(1), previous: null, previousRange: null });
    expect(alone[0]).toMatchObject({ previous: null, change: { direction: "none" } });
  });

  it("maps daily rows", () => {
    expect(dailySeries([{ date: "2026-01-01", calls: 3, audioMinutes: 10.4, videoMinutes: 2.6, avgDurationSeconds: 1, avgParticipants: 2 }])).toEqual([
      { date: "2026-01-01", calls: 3, audioMinutes: 10, videoMinutes: 3 },
    ]);
  });

  it("groups breakdowns per dimension with shares, hiding an empty 'other'", () => {
    const row = (dimension: BreakdownRow["dimension"], value: string, calls: number): BreakdownRow => ({ dimension, value, calls, audioMinutes: 0, videoMinutes: 0, totalMinutes: calls });
    const groups = breakdownGroups([row("type", "audio", 3), row("type", "video", 1), row("type", "other", 0), row("mode", "call", 4), row("mode", "other", 2)]);
    expect(groups[0]).toMatchObject({ dimension: "type", title: "Type", total: 4 });
    expect(groups[0].items.map((i) => [i.label, i.share])).toEqual([["Audio", 0.75], ["Video", 0.25]]);
    expect(groups[1].items.map((i) => i.value)).toEqual(["call", "other"]);
    expect(groups[2].items).toEqual([]);
  });

  it("lays the heatmap out Monday first with intensities", () => {
    const cells: HeatmapCell[] = [];
    const names = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    for (let weekday = 0; weekday < 7; weekday++) for (let hour = 0; hour < 24; hour++) cells.push({ weekday, weekdayName: names[weekday], hour, calls: 0, hours: 1, average: 0 });
    cells[1 * 24 + 9].average = 4;
    cells[0 * 24 + 10].average = 2;
    const grid = heatmapGrid(cells);
    expect(grid.max).toBe(4);
    expect(grid.rows.map((r) => r.name)).toEqual(["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]);
    expect(grid.rows[0].cells[9].intensity).toBe(1);
    expect(grid.rows[6].cells[10].intensity).toBe(0.5);
    expect(heatmapGrid([]).max).toBe(0);
  });

  it("maps durations and engagement with shares", () => {
    expect(durationSeries([{ bucket: "lt1m", label: "<1 min", minSeconds: 0, maxSeconds: 60, calls: 1 }, { bucket: "ge60m", label: "≥60 min", minSeconds: 3600, maxSeconds: null, calls: 3 }])).toEqual([
      { label: "<1 min", tick: "<1", value: 1, share: 0.25 },
      { label: "≥60 min", tick: "≥60", value: 3, share: 0.75 },
    ]);
    const engagement = engagementSeries([
      { bucket: "1", minCalls: 1, maxCalls: 1, participants: 2 },
      { bucket: "2-5", minCalls: 2, maxCalls: 5, participants: 0 },
      { bucket: "101+", minCalls: 101, maxCalls: null, participants: 1 },
    ]);
    expect(engagement.map((p) => [p.tick, p.label])).toEqual([["1", "1 call"], ["2–5", "2–5 calls"], ["101+", "101+ calls"]]);
  });

  it("puts joins and leaves on one axis", () => {
    const p = (uid: string, joinedAt: number | null, leftAt: number | null, minutes = 1) => ({
      seq: 0, uid, state: joinedAt ? "ended" : "unanswered", isJoined: joinedAt !== null, joinedAt, leftAt,
      totalAudioMinutes: minutes, totalVideoMinutes: 0, totalDurationMinutes: minutes, deviceId: null, mid: null,
    });
    const call = { startedAt: 1000, initiatedAt: 990, endedAt: 1600, participants: [p("a", 1000, 1600, 10), p("b", 1100, null, 3), p("c", null, null, 0)] } satisfies Pick<CallDetail, "startedAt" | "initiatedAt" | "endedAt" | "participants">;
    const t = callTimeline(call)!;
    expect([t.start, t.end]).toEqual([1000, 1600]);
    const spans = (rows: typeof t.rows) => rows.map((r) => [r.uid, ...r.segments.map((g) => [g.joinOffset, g.leaveOffset])]);
    expect(spans(t.rows)).toEqual([["a", [0, 600]], ["b", [100, 600]], ["c"]]);
    expect(t.rows[2]).toMatchObject({ joined: false, state: "unanswered" });
    expect(callTimeline({ startedAt: null, initiatedAt: null, endedAt: null, participants: [] })).toBeNull();
    expect(participantMinutes(call).map((m) => m.uid)).toEqual(["a", "b", "c"]);
    // An ongoing call: no end, no leaves; it spans what the platform has counted so far.
    const ongoing = { startedAt: 1000, initiatedAt: 990, endedAt: null, durationSeconds: 204, participants: [p("a", 1000, null, 3.4), p("b", 1004, null, 3)] };
    const live = callTimeline(ongoing)!;
    expect([live.start, live.end]).toEqual([1000, 1204]);
    expect(live.rows.map((r) => r.segments[0].leaveOffset)).toEqual([204, 204]);
    // A rejoin: one row, two segments; its minutes summed into one bar.
    const rejoin = { ...call, participants: [p("a", 1000, 1200, 4), p("b", 1100, 1500, 6), p("a", 1300, 1600, 5)] };
    expect(spans(callTimeline(rejoin)!.rows)).toEqual([["a", [0, 200], [300, 600]], ["b", [100, 500]]]);
    expect(participantMinutes(rejoin)).toEqual([{ uid: "a", audio: 9, video: 0, total: 9 }, { uid: "b", audio: 6, video: 0, total: 6 }]);
  });

  it("puts a timeline's ticks on round offsets that fit", () => {
    expect(timelineTicks(600).map((t) => t.label)).toEqual(["+2m", "+4m", "+6m", "+8m"]);
    expect(timelineTicks(3725).map((t) => t.label)).toEqual(["+15m", "+30m", "+45m"]);
    expect(timelineTicks(3725).map((t) => t.minor)).toEqual([false, false, false]);
    expect(timelineTicks(600).map((t) => t.minor)).toEqual([true, false, true, false]);
    expect(timelineTicks(5 * 3600 + 60).map((t) => t.label)).toEqual(["+2h", "+4h"]);
    expect(timelineTicks(40).map((t) => t.offset)).toEqual([10, 20, 30]);
    // Nothing so close to the end that its label would be cut.
    expect(timelineTicks(61).map((t) => t.offset)).toEqual([15, 30, 45]);
  });
  it("merges per-app daily rows into one trend", () => {
    const d = (date: string, calls: number) => ({ date, calls, audioMinutes: calls, videoMinutes: 0, avgDurationSeconds: 0, avgParticipants: 0 });
    expect(appTrend([{ app: "x", rows: [d("2026-01-02", 2), d("2026-01-01", 1)] }, { app: "y", rows: [d("2026-01-01", 5)] }])).toEqual([
      { date: "2026-01-01", x: 1, y: 5 },
      { date: "2026-01-02", x: 2, y: 0 },
    ]);
  });
});
