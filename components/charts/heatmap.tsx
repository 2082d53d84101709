import type { HeatmapRow } from "@/lib/ui/charts";
import { formatDecimal } from "@/lib/ui/format";
import { ScrollBox } from "../scroll-box";

/**
 * Weekday × hour grid: a table (screen readers read the numbers), shaded by load. The 24
 * columns share the width (a phone shows the whole day too, with an hour label every 6 h).
 */
export function Heatmap({ rows, tz }: { rows: HeatmapRow[]; tz: string }) {
  return (
    <ScrollBox label="Concurrent calls by weekday and hour">
      <table className="heatmap">
        <caption className="sr-only">Average concurrent calls by weekday and hour ({tz})</caption>
        <thead>
          <tr>
            <th scope="col">
              <span className="sr-only">Weekday</span>
            </th>
            {Array.from({ length: 24 }, (_, h) => (
              <th key={h} scope="col">
                {h % 3 === 0 ? <span className={h % 6 === 0 ? undefined : "hour-minor"}>{String(h).padStart(2, "0")}</span> : <span className="sr-only">{h}</span>}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.weekday}>
              <th scope="row">{r.name}</th>
              {r.cells.map((c) => (
                <td
                  key={c.hour}
                  title={`${r.name} ${String(c.hour).padStart(2, "0")}:00 — ${formatDecimal(c.average)} calls on average`}
                  style={{ background: c.intensity > 0 ? `color-mix(in srgb, var(--chart-1) ${Math.round(10 + c.intensity * 85)}%, transparent)` : undefined }}
                >
                  <span className="sr-only">{formatDecimal(c.average)}</span>
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollBox>
  );
}
