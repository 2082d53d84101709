"use client";

import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { formatInt } from "@/app/_ops/format";
import { valueAxis } from "@/components/charts/theme";
import { CATEGORIES, type ChartPoint } from "@/lib/ops/events-rows";

const LABEL: Record<(typeof CATEGORIES)[number], string> = { chat: "Chat", call: "Call", meeting: "Meeting", recording: "Recording", unknown: "Other" };

/** Events per day, stacked by trigger category. The table below it carries the same numbers. */
export function EventsChart({ points, total }: { points: ChartPoint[]; total: number }) {
  const present = CATEGORIES.filter((c) => points.some((p) => p[c] > 0));
  return (
    <figure className="ops-chart-figure" style={{ margin: 0 }}>
      <div className="ops-chart" role="img" aria-label={`Events per day: ${formatInt(total)} over ${points.length} days, by category.`}>
        <ResponsiveContainer width="100%" height="100%">
          <BarChart data={points} margin={{ top: 8, right: 8, bottom: 0, left: 0 }} accessibilityLayer={false}>
            <CartesianGrid strokeDasharray="3 3" stroke="var(--border)" vertical={false} />
            <XAxis dataKey="day" tick={{ fill: "var(--muted)", fontSize: 11 }} tickFormatter={(d: string) => d.slice(5)} minTickGap={16} stroke="var(--border)" />
            <YAxis tick={{ fill: "var(--muted)", fontSize: 11 }} width={44} stroke="var(--border)" {...valueAxis(Math.max(0, ...points.map((p) => CATEGORIES.reduce((n, c) => n + p[c], 0))), "count")} />
            <Tooltip
              cursor={{ fill: "var(--border)", opacity: 0.4 }}
              contentStyle={{ background: "var(--surface)", border: "1px solid var(--border)", borderRadius: 6, color: "var(--text)" }}
              formatter={(v, name) => [formatInt(Number(v)), LABEL[name as keyof typeof LABEL] ?? String(name)]}
            />
            {present.map((c) => (
              <Bar key={c} dataKey={c} stackId="events" fill={`var(--ops-c-${c})`} isAnimationActive={false} />
            ))}
          </BarChart>
        </ResponsiveContainer>
      </div>
      <ul className="ops-legend" aria-label="Categories">
        {present.map((c) => (
          <li key={c}>
            <span className="ops-swatch" style={{ background: `var(--ops-c-${c})` }} aria-hidden="true" />
            {LABEL[c]}
          </li>
        ))}
      </ul>
    </figure>
  );
}
