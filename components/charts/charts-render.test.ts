import { createElement, type ReactElement } from "react";
import { renderToString } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { callTimeline, heatmapGrid, timelineTicks } from "@/lib/ui/charts";
import { BarSeries } from "./bar-series";
import { BreakdownBars } from "./breakdown-bars";
import { DailyCharts } from "./daily-chart";
import { Heatmap } from "./heatmap";
import { ParticipantMinutesChart } from "./participant-minutes";
import { CallTimeline } from "./timeline";
import { TrendChart } from "./trend-chart";

/**
 * Every chart, rendered as the server renders a page, with the values the warehouse may
 * hold at the edges: a huge one (one call of 1e300 minutes once made the overview answer
 * 500), the largest double, zero, a single point and no point at all (issue 30 item 3).
 */
const VALUES = { huge: 1e300, largest: Number.MAX_VALUE, zero: 0, ordinary: 42 };
const days = (n: number, value: number) => Array.from({ length: n }, (_, i) => ({ date: `2026-01-${String(i + 1).padStart(2, "0")}`, calls: value, audioMinutes: value, videoMinutes: value / 2 }));

function charts(value: number, points: number): Array<[string, ReactElement]> {
  const bars = Array.from({ length: points }, (_, i) => ({ label: `${i} min`, tick: String(i), value, share: points ? 1 / points : 0 }));
  const heat = heatmapGrid(Array.from({ length: points }, (_, i) => ({ weekday: i % 7, weekdayName: "Mon", hour: i % 24, calls: value, hours: 1, average: value })));
  const start = 1_780_000_000;
  const timeline = callTimeline({
    startedAt: start, initiatedAt: start, endedAt: null, durationSeconds: Math.min(value * 60, Number.MAX_SAFE_INTEGER),
    participants: Array.from({ length: points }, (_, i) => ({ uid: `u${i}`, state: "ongoing", joinedAt: start + i, leftAt: null, totalDurationMinutes: value, totalAudioMinutes: value, totalVideoMinutes: 0 })),
  } as unknown as Parameters<typeof callTimeline>[0]);
  const list: Array<[string, ReactElement]> = [
    ["daily", createElement(DailyCharts, { points: days(points, value) })],
    ["bar-series", createElement(BarSeries, { points: bars, title: "Calls by duration", unit: "calls", xTitle: "minutes" })],
    ["breakdown", createElement(BreakdownBars, { group: { dimension: "type", title: "Type", total: value * points, items: bars.map((b) => ({ value: b.tick, label: b.label, calls: value, share: b.share, minutes: value })) } })],
    ["heatmap", createElement(Heatmap, { rows: heat.rows, tz: "UTC" })],
    ["participant-minutes", createElement(ParticipantMinutesChart, { rows: Array.from({ length: points }, (_, i) => ({ uid: `u${i}`, audio: value, video: value, total: value * 2 })) })],
    ["trend", createElement(TrendChart, { points: days(points, value).map((d) => ({ date: d.date, a: value, b: value / 3 })), series: [{ key: "a", name: "A" }, { key: "b", name: "B" }], unit: "Minutes" })],
    ["trend calls", createElement(TrendChart, { points: days(points, value).map((d) => ({ date: d.date, a: value })), series: [{ key: "a", name: "A" }], unit: "Calls" })],
  ];
  if (timeline) list.push(["timeline", createElement(CallTimeline, { timeline, tz: "UTC" })]);
  return list;
}

describe("every chart survives any value the warehouse may hold", () => {
  for (const [name, value] of Object.entries(VALUES)) {
    for (const points of [0, 1, 30]) {
      it(`${name} values, ${points} point(s)`, () => {
        for (const [chart, element] of charts(value, points)) {
          let html = "";
          expect(() => (html = renderToString(element)), chart).not.toThrow();
          expect(html.length, chart).toBeGreaterThan(0);
          expect(html, chart).not.toContain("Infinity");
        }
      });
    }
  }

  it("a timeline's ticks stay few for any span, and none for an empty or broken one", () => {
    for (const span of [1e15, 1e300, Number.MAX_VALUE]) expect(timelineTicks(span).length).toBeLessThanOrEqual(5);
    for (const span of [0, -1, Number.NaN, Infinity]) expect(timelineTicks(span)).toEqual([]);
  });
});
