"use client";

import { Bar, BarChart, CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import type { DailyPoint } from "@/lib/ui/charts";
import { formatCount, formatDay, formatMinutes } from "@/lib/ui/format";
import { AXIS, GRID, TOOLTIP, valueAxis } from "./theme";

/**
 * Calls per day (bars) and participant minutes per day, audio and video each a line of
 * its own: each day's value as it is (not stacked, not smoothed), on round ticks in the
 * unit of the tooltip.
 */
export function DailyCharts({ points }: { points: DailyPoint[] }) {
  const maxCalls = Math.max(0, ...points.map((p) => p.calls));
  const maxMinutes = Math.max(0, ...points.map((p) => Math.max(p.audioMinutes, p.videoMinutes)));
  return (
    <div className="chart-pair">
      <figure className="chart" aria-label="Calls per day" data-testid="chart-calls-per-day">
        <figcaption>Calls per day</figcaption>
        <ResponsiveContainer width="100%" height={220} initialDimension={{ width: 500, height: 220 }}>
          <BarChart data={points} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
            <CartesianGrid {...GRID} />
            <XAxis dataKey="date" tickFormatter={(d: string) => formatDay(d)} {...AXIS} minTickGap={24} />
            <YAxis {...AXIS} width={44} {...valueAxis(maxCalls, "count")} />
            <Tooltip {...TOOLTIP} labelFormatter={(d) => formatDay(String(d), true)} formatter={(v) => [formatCount(Number(v)), "Calls"]} />
            <Bar dataKey="calls" name="Calls" fill="var(--chart-1)" isAnimationActive={false} />
          </BarChart>
        </ResponsiveContainer>
      </figure>
      <figure className="chart" aria-label="Participant minutes per day" data-testid="chart-minutes-per-day">
        <figcaption>Participant minutes per day</figcaption>
        <ResponsiveContainer width="100%" height={220} initialDimension={{ width: 500, height: 220 }}>
          <LineChart data={points} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
            <CartesianGrid {...GRID} />
            <XAxis dataKey="date" tickFormatter={(d: string) => formatDay(d)} {...AXIS} minTickGap={24} />
            <YAxis {...AXIS} width={52} {...valueAxis(maxMinutes, "minutes")} />
            <Tooltip {...TOOLTIP} labelFormatter={(d) => formatDay(String(d), true)} formatter={(v, name) => [formatMinutes(Number(v)), String(name)]} />
            <Legend wrapperStyle={{ fontSize: 12 }} />
            <Line type="linear" dataKey="audioMinutes" name="Audio" stroke="var(--chart-1)" dot={false} strokeWidth={1.5} isAnimationActive={false} />
            <Line type="linear" dataKey="videoMinutes" name="Video" stroke="var(--chart-2)" dot={false} strokeWidth={1.5} isAnimationActive={false} />
          </LineChart>
        </ResponsiveContainer>
      </figure>
    </div>
  );
}
