"use client";

import { Area, AreaChart, Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import type { DailyPoint } from "@/lib/ui/charts";
import { formatCompact, formatCount, formatDay, formatMinutes } from "@/lib/ui/format";
import { AXIS, GRID, TOOLTIP } from "./theme";

/** Calls per day (bars) and audio/video minutes per day (stacked areas). */
export function DailyCharts({ points }: { points: DailyPoint[] }) {
  return (
    <div className="chart-pair">
      <figure className="chart" aria-label="Calls per day">
        <figcaption>Calls per day</figcaption>
        <ResponsiveContainer width="100%" height={220} initialDimension={{ width: 500, height: 220 }}>
          <BarChart data={points} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
            <CartesianGrid {...GRID} />
            <XAxis dataKey="date" tickFormatter={(d: string) => formatDay(d)} {...AXIS} minTickGap={24} />
            <YAxis tickFormatter={formatCompact} {...AXIS} width={44} allowDecimals={false} />
            <Tooltip {...TOOLTIP} labelFormatter={(d) => formatDay(String(d), true)} formatter={(v) => [formatCount(Number(v)), "Calls"]} />
            <Bar dataKey="calls" name="Calls" fill="var(--chart-1)" isAnimationActive={false} />
          </BarChart>
        </ResponsiveContainer>
      </figure>
      <figure className="chart" aria-label="Minutes per day">
        <figcaption>Minutes per day</figcaption>
        <ResponsiveContainer width="100%" height={220} initialDimension={{ width: 500, height: 220 }}>
          <AreaChart data={points} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
            <CartesianGrid {...GRID} />
            <XAxis dataKey="date" tickFormatter={(d: string) => formatDay(d)} {...AXIS} minTickGap={24} />
            <YAxis tickFormatter={formatCompact} {...AXIS} width={44} />
            <Tooltip {...TOOLTIP} labelFormatter={(d) => formatDay(String(d), true)} formatter={(v, name) => [formatMinutes(Number(v)), String(name)]} />
            <Legend wrapperStyle={{ fontSize: 12 }} />
            <Area type="monotone" dataKey="audioMinutes" name="Audio" stackId="m" stroke="var(--chart-1)" fill="var(--chart-1)" fillOpacity={0.35} isAnimationActive={false} />
            <Area type="monotone" dataKey="videoMinutes" name="Video" stackId="m" stroke="var(--chart-2)" fill="var(--chart-2)" fillOpacity={0.35} isAnimationActive={false} />
          </AreaChart>
        </ResponsiveContainer>
      </figure>
    </div>
  );
}
