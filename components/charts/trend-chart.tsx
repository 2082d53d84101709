"use client";

import { CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { formatCount, formatDay, formatMinutes } from "@/lib/ui/format";
import { AXIS, GRID, SERIES, TOOLTIP, valueAxis } from "./theme";

/** One line per tenant app over the days, each day's value as it is (straight segments); `series`: each app's key in the points and its name for the legend. */
export function TrendChart({ points, series, unit }: { points: Array<Record<string, number | string>>; series: Array<{ key: string; name: string }>; unit: "Calls" | "Minutes" }) {
  if (points.length === 0) return <p className="empty-state">No calls match these filters.</p>;
  const max = Math.max(0, ...points.flatMap((p) => series.map((s) => Number(p[s.key] ?? 0))));
  return (
    <figure className="chart" aria-label={`${unit} per day per app`}>
      <ResponsiveContainer width="100%" height={280} initialDimension={{ width: 800, height: 280 }}>
        <LineChart data={points} margin={{ top: 8, right: 12, bottom: 0, left: 0 }}>
          <CartesianGrid {...GRID} />
          <XAxis dataKey="date" tickFormatter={(d: string) => formatDay(d)} {...AXIS} minTickGap={24} />
          <YAxis {...AXIS} width={52} {...valueAxis(max, unit === "Calls" ? "count" : "minutes")} />
          <Tooltip {...TOOLTIP} labelFormatter={(d) => formatDay(String(d), true)} formatter={(v, name) => [unit === "Calls" ? formatCount(Number(v)) : formatMinutes(Number(v)), String(name)]} />
          <Legend wrapperStyle={{ fontSize: 12 }} />
          {series.map((s, i) => (
            <Line key={s.key} type="linear" dataKey={s.key} name={s.name} stroke={SERIES[i % SERIES.length]} dot={false} strokeWidth={2} isAnimationActive={false} />
          ))}
        </LineChart>
      </ResponsiveContainer>
    </figure>
  );
}
