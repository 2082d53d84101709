import type { Timeline } from "@/lib/ui/charts";
import { timelineTicks } from "@/lib/ui/charts";
import { formatTime } from "@/lib/ui/format";

/**
 * One row per person, a bar from each of their joins to its leave on the call's time axis
 * (a rejoin is a second bar on the same row).
 * Plain HTML positioned in percent (not a scaled SVG), so labels keep their size on a phone.
 */
export function CallTimeline({ timeline, tz }: { timeline: Timeline; tz: string }) {
  const span = timeline.end - timeline.start;
  const pct = (offset: number) => `${((offset / span) * 100).toFixed(3)}%`;
  const ticks = timelineTicks(span);
  return (
    <figure className="chart timeline" data-testid="timeline">
      <p className="sr-only">
        {timeline.rows
          .map((r) => `${r.uid}: ${r.joined ? r.segments.map((g) => `joined ${formatTime(g.joinedAt, tz)}, left ${g.leftAt === null ? "still in" : formatTime(g.leftAt, tz)}`).join("; then ") : "never joined"}`)
          .join(". ")}
      </p>
      <ol className="timeline-rows" aria-hidden="true">
        {timeline.rows.map((r) => (
          <li key={r.uid} className="timeline-row" data-uid={r.uid} data-sessions={r.segments.length}>
            <span className="timeline-label" title={r.uid}>
              {r.uid}
            </span>
            <span className="timeline-track">
              {r.segments.length > 0 ? (
                r.segments.map((g, i) => (
                  <span
                    key={i}
                    className="timeline-bar"
                    style={{ left: pct(g.joinOffset), width: `max(2px, ${pct(g.leaveOffset - g.joinOffset)})` }}
                    title={`${r.uid}: ${formatTime(g.joinedAt, tz)} – ${g.leftAt === null ? "still in" : formatTime(g.leftAt, tz)}`}
                  />
                ))
              ) : (
                <span className="timeline-never">never joined ({r.state ?? "unknown"})</span>
              )}
            </span>
          </li>
        ))}
      </ol>
      <div className="timeline-axis" aria-hidden="true">
        <span className="timeline-label">{formatTime(timeline.start, tz)}</span>
        <span className="timeline-track">
          {ticks.map((t) => (
            <span key={t.offset} className={`timeline-tick${t.minor ? " timeline-tick-minor" : ""}`} style={{ left: pct(t.offset) }}>
              {t.label}
            </span>
          ))}
        </span>
      </div>
    </figure>
  );
}
