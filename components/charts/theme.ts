import { formatCompact } from "@/lib/ui/format";
import { formatMinutesTick, niceTicks } from "@/lib/ui/ticks";

/** Shared recharts styling, in the page's CSS variables (light and dark follow). */
export const AXIS = { stroke: "var(--muted)", tick: { fill: "var(--muted)", fontSize: 11 }, tickLine: false } as const;
export const GRID = { stroke: "var(--border)", strokeDasharray: "3 3", vertical: false } as const;
export const TOOLTIP = {
  contentStyle: { background: "var(--surface)", border: "1px solid var(--border)", borderRadius: 6, color: "var(--text)", fontSize: 12 },
  labelStyle: { color: "var(--text)", fontWeight: 600 },
  itemStyle: { color: "var(--text)" },
  cursor: { fill: "var(--hover)" },
} as const;
export const SERIES = ["var(--chart-1)", "var(--chart-2)", "var(--chart-3)", "var(--chart-4)", "var(--chart-5)", "var(--chart-6)"];

/**
 * A value axis on round ticks (lib/ui/ticks.ts) covering `max`: counts as 0 / 5 / 10 or
 * 1K / 2K, minutes as 0 / 10h / 20h, in the units the tooltips use.
 */
export function valueAxis(max: number, unit: "count" | "minutes") {
  const ticks = niceTicks(max, unit);
  return {
    ticks,
    domain: [0, ticks[ticks.length - 1]] as [number, number],
    interval: 0 as const,
    allowDecimals: false,
    tickFormatter: unit === "minutes" ? formatMinutesTick : formatCompact,
  };
}
