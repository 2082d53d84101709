import type { Timeline } from "@/lib/ui/charts";
import { formatSeconds, formatTime } from "@/lib/ui/format";

/** One row per participant, a bar from join to leave on the call's time axis (SVG). */
export function CallTimeline({ timeline, tz }: { timeline: Timeline; tz: string }) {
  const rowH = 26;
  const labelW = 120;
  const width = 600;
  const plotW = width - labelW - 10;
  const span = timeline.end - timeline.start;
  const x = (offset: number) => labelW + (offset / span) * plotW;
  const height = timeline.rows.length * rowH + 28;
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => Math.round(f * span));
  return (
    <figure className="chart timeline">
      <svg viewBox={`0 0 ${width} ${height}`} width="100%" role="img" aria-labelledby="timeline-desc" preserveAspectRatio="xMinYMin meet">
        <desc id="timeline-desc">
          {timeline.rows.map((r) => `${r.uid}: ${r.joined ? `joined ${formatTime(r.joinedAt, tz)}, left ${formatTime(r.leftAt, tz)}` : "never joined"}`).join("; ")}
        </desc>
        {ticks.map((t) => (
          <g key={t}>
            <line x1={x(t)} x2={x(t)} y1={0} y2={height - 20} stroke="var(--border)" />
            <text x={x(t)} y={height - 6} fontSize={10} fill="var(--muted)" textAnchor={t === 0 ? "start" : t === span ? "end" : "middle"}>
              {t === 0 ? formatTime(timeline.start, tz) : `+${formatSeconds(t)}`}
            </text>
          </g>
        ))}
        {timeline.rows.map((r, i) => (
          <g key={`${r.uid}-${i}`} transform={`translate(0, ${i * rowH})`}>
            <text x={0} y={17} fontSize={11} fill="var(--text)">
              {r.uid.length > 16 ? `${r.uid.slice(0, 15)}…` : r.uid}
            </text>
            {r.joinOffset !== null && r.leaveOffset !== null ? (
              <rect x={x(r.joinOffset)} y={6} width={Math.max(2, x(r.leaveOffset) - x(r.joinOffset))} height={14} rx={3} fill="var(--chart-1)">
                <title>{`${r.uid}: ${formatTime(r.joinedAt, tz)} – ${formatTime(r.leftAt, tz)}`}</title>
              </rect>
            ) : (
              <text x={labelW} y={17} fontSize={11} fill="var(--muted)">
                never joined ({r.state ?? "unknown"})
              </text>
            )}
          </g>
        ))}
      </svg>
    </figure>
  );
}
