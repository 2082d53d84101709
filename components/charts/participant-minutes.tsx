"use client";

import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { formatMinutes } from "@/lib/ui/format";
import { AXIS, GRID, TOOLTIP, valueAxis } from "./theme";

/** Audio and video minutes per person of one call (horizontal bars: audio + video make up the person's minutes). */
export function ParticipantMinutesChart({ rows }: { rows: Array<{ uid: string; audio: number; video: number; total: number }> }) {
  const height = Math.max(120, rows.length * 28 + 50);
  return (
    <figure className="chart" aria-label="Minutes per participant">
      <ResponsiveContainer width="100%" height={height} initialDimension={{ width: 400, height }}>
        <BarChart data={rows} layout="vertical" margin={{ top: 4, right: 12, bottom: 0, left: 0 }}>
          <CartesianGrid {...GRID} horizontal={false} vertical />
          <XAxis type="number" {...AXIS} {...valueAxis(Math.max(0, ...rows.map((r) => r.total)), "minutes")} />
          <YAxis type="category" dataKey="uid" {...AXIS} width={100} />
          <Tooltip {...TOOLTIP} formatter={(v, name) => [formatMinutes(Number(v)), String(name)]} />
          <Legend wrapperStyle={{ fontSize: 12 }} />
          <Bar dataKey="audio" name="Audio" stackId="m" fill="var(--chart-1)" isAnimationActive={false} />
          <Bar dataKey="video" name="Video" stackId="m" fill="var(--chart-2)" isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </figure>
  );
}
