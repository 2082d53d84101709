"use client";

import { CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { formatCompact, formatCount, formatDay, formatMinutes } from "@/lib/ui/format";
import { AXIS, GRID, SERIES, TOOLTIP } from "./theme";

/** One line per tenant app over the days. */
export function TrendChart({ points, series, unit }: { points: Array<Record<string, number | string>>; series: string[]; unit: "Calls" | "Minutes" }) {
  if (points.length === 0) return <p className="empty-state">No calls match these filters.</p>;
  return (
    <figure className="chart" aria-label={`${unit} per day per app`}>
      <ResponsiveContainer width="100%" height={280} initialDimension={{ width: 800, height: 280 }}>
        <LineChart data={points} margin={{ top: 8, right: 12, bottom: 0, left: 0 }}>
          <CartesianGrid {...GRID} />
          <XAxis dataKey="date" tickFormatter={(d: string) => formatDay(d)} {...AXIS} minTickGap={24} />
          <YAxis tickFormatter={formatCompact} {...AXIS} width={44} />
          <Tooltip {...TOOLTIP} labelFormatter={(d) => formatDay(String(d), true)} formatter={(v, name) => [unit === "Calls" ? formatCount(Number(v)) : formatMinutes(Number(v)), String(name)]} />
          <Legend wrapperStyle={{ fontSize: 12 }} />
          {series.map((s, i) => (
            <Line key={s} type="monotone" dataKey={s} stroke={SERIES[i % SERIES.length]} dot={false} strokeWidth={2} isAnimationActive={false} />
          ))}
        </LineChart>
      </ResponsiveContainer>
    </figure>
  );
}
