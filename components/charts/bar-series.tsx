"use client";

import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import type { BarPoint } from "@/lib/ui/charts";
import { formatCount, formatPercent } from "@/lib/ui/format";
import { AXIS, GRID, TOOLTIP, valueAxis } from "./theme";

/**
 * A labelled bar per bucket (duration distribution, engagement). The axis shows short
 * ticks ("5–15") and says their unit once (`xTitle`), so the labels fit a phone.
 */
export function BarSeries({ points, title, unit, xTitle, color = "var(--chart-1)" }: { points: BarPoint[]; title: string; unit: string; xTitle: string; color?: string }) {
  return (
    <figure className="chart" aria-label={title}>
      <ResponsiveContainer width="100%" height={220} initialDimension={{ width: 400, height: 220 }}>
        <BarChart data={points} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
          <CartesianGrid {...GRID} />
          <XAxis dataKey="tick" {...AXIS} interval={0} fontSize={11} />
          <YAxis {...AXIS} width={44} {...valueAxis(Math.max(0, ...points.map((p) => p.value)), "count")} />
          <Tooltip {...TOOLTIP} labelFormatter={(_t, items) => String((items[0]?.payload as BarPoint | undefined)?.label ?? "")} formatter={(v, _n, item) => [`${formatCount(Number(v))} (${formatPercent((item.payload as BarPoint).share)})`, unit]} />
          <Bar dataKey="value" name={unit} fill={color} isAnimationActive={false} radius={[3, 3, 0, 0]} />
        </BarChart>
      </ResponsiveContainer>
      <figcaption className="axis-title">{xTitle}</figcaption>
      <table className="sr-only">
        <caption>{title}</caption>
        <tbody>
          {points.map((p) => (
            <tr key={p.label}>
              <th scope="row">{p.label}</th>
              <td>{formatCount(p.value)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
