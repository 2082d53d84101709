import Link from "next/link";
import type { HeatmapRow } from "@/lib/ui/charts";
import { formatCount, formatDecimal } from "@/lib/ui/format";
import { ScrollBox } from "../scroll-box";

/**
 * Weekday × hour grid: a table (screen readers read the numbers), shaded by load. The 24
 * columns share the width (a phone shows the whole day too, with an hour label every 6 h).
 * `cellHref`: each cell is a link there (the drill-down: the calls running in that hour,
 * as many as the cell counts), named with its weekday, hour and count.
 */
export function Heatmap({ rows, tz, cellHref }: { rows: HeatmapRow[]; tz: string; cellHref?: (weekday: number, hour: number) => string }) {
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
              {r.cells.map((c) => {
                const hour = `${String(c.hour).padStart(2, "0")}:00`;
                const title = `${r.name} ${hour} — ${formatDecimal(c.average)} calls on average`;
                return (
                  <td
                    key={c.hour}
                    title={title}
                    style={{ background: c.intensity > 0 ? `color-mix(in srgb, var(--chart-1) ${Math.round(10 + c.intensity * 85)}%, transparent)` : undefined }}
                  >
                    {cellHref ? (
                      <Link
                        className="heatmap-cell-link"
                        href={cellHref(r.weekday, c.hour)}
                        aria-label={`${r.name} ${hour}: ${formatCount(c.calls)} ${c.calls === 1 ? "call" : "calls"} running (${formatDecimal(c.average)} on average) — list them`}
                        data-calls={c.calls}
                      >
                        <span className="sr-only">{formatDecimal(c.average)}</span>
                      </Link>
                    ) : (
                      <span className="sr-only">{formatDecimal(c.average)}</span>
                    )}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollBox>
  );
}
