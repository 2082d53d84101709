"use client";

import { Bar, CartesianGrid, ComposedChart, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import type { DailyPoint } from "@/lib/ui/charts";
import { formatCount, formatDay, formatMinutes } from "@/lib/ui/format";
import { AXIS, GRID, TOOLTIP, valueAxis } from "./theme";

/**
 * Calls per day (bars) and participant minutes per day, audio and video each a line of
 * its own: each day's value as it is (not stacked, not smoothed), on round ticks in the
 * unit of the tooltip.
 */
export function DailyCharts({ points, previousLabel, onPickDay }: { points: DailyPoint[]; previousLabel?: string; onPickDay?: (date: string) => void }) {
  const comparing = previousLabel !== undefined && points.some((p) => p.previousDate !== undefined);
  const maxCalls = Math.max(0, ...points.map((p) => Math.max(p.calls, comparing ? (p.previousCalls ?? 0) : 0)));
  const maxMinutes = Math.max(0, ...points.map((p) => Math.max(p.audioMinutes, p.videoMinutes, comparing ? (p.previousMinutes ?? 0) : 0)));
  // The tooltip names the compared day too ("Oct 3"), not only "previous".
  const previousName = (point: unknown) => {
    const p = point as DailyPoint | undefined;
    return p?.previousDate ? `${previousLabel} (${formatDay(p.previousDate)})` : String(previousLabel);
  };
  return (
    <div className="chart-pair">
      <figure className="chart" aria-label="Calls per day" data-testid="chart-calls-per-day">
        <figcaption>Calls per day{onPickDay ? <span className="muted"> · select a bar for that day</span> : null}</figcaption>
        <ResponsiveContainer width="100%" height={220} initialDimension={{ width: 500, height: 220 }}>
          <ComposedChart data={points} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
            <CartesianGrid {...GRID} />
            <XAxis dataKey="date" tickFormatter={(d: string) => formatDay(d)} {...AXIS} minTickGap={24} />
            <YAxis {...AXIS} width={44} {...valueAxis(maxCalls, "count")} />
            <Tooltip {...TOOLTIP} labelFormatter={(d) => formatDay(String(d), true)} formatter={(v, name, item) => [formatCount(Number(v)), name === "previous" ? previousName(item.payload) : "Calls"]} />
            {comparing ? <Legend wrapperStyle={{ fontSize: 12 }} formatter={(name) => (name === "previous" ? previousLabel : name)} /> : null}
            <Bar
              dataKey="calls"
              name="Calls"
              fill="var(--chart-1)"
              isAnimationActive={false}
              cursor={onPickDay ? "pointer" : undefined}
              onClick={onPickDay ? (entry: { payload?: DailyPoint }) => entry.payload && onPickDay(entry.payload.date) : undefined}
            />
            {comparing ? <Line type="linear" dataKey="previousCalls" name="previous" stroke="var(--chart-6)" strokeDasharray="4 3" dot={false} strokeWidth={1.5} isAnimationActive={false} /> : null}
          </ComposedChart>
        </ResponsiveContainer>
      </figure>
      <figure className="chart" aria-label="Participant minutes per day" data-testid="chart-minutes-per-day">
        <figcaption>Participant minutes per day</figcaption>
        <ResponsiveContainer width="100%" height={220} initialDimension={{ width: 500, height: 220 }}>
          <LineChart data={points} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
            <CartesianGrid {...GRID} />
            <XAxis dataKey="date" tickFormatter={(d: string) => formatDay(d)} {...AXIS} minTickGap={24} />
            <YAxis {...AXIS} width={52} {...valueAxis(maxMinutes, "minutes")} />
            <Tooltip {...TOOLTIP} labelFormatter={(d) => formatDay(String(d), true)} formatter={(v, name, item) => [formatMinutes(Number(v)), name === "previous" ? `Audio + video, ${previousName(item.payload)}` : String(name)]} />
            <Legend wrapperStyle={{ fontSize: 12 }} formatter={(name) => (name === "previous" ? `Audio + video, ${previousLabel}` : name)} />
            <Line type="linear" dataKey="audioMinutes" name="Audio" stroke="var(--chart-1)" dot={false} strokeWidth={1.5} isAnimationActive={false} />
            <Line type="linear" dataKey="videoMinutes" name="Video" stroke="var(--chart-2)" dot={false} strokeWidth={1.5} isAnimationActive={false} />
            {comparing ? <Line type="linear" dataKey="previousMinutes" name="previous" stroke="var(--chart-6)" strokeDasharray="4 3" dot={false} strokeWidth={1.5} isAnimationActive={false} /> : null}
          </LineChart>
        </ResponsiveContainer>
      </figure>
    </div>
  );
}
