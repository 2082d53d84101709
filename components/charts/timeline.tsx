import type { Timeline } from "@/lib/ui/charts";
import { timelineTicks } from "@/lib/ui/charts";
import { formatTime } from "@/lib/ui/format";

/**
 * One row per participant, a bar from each join to its leave on the call's time axis.
 * Plain HTML positioned in percent (not a scaled SVG), so labels keep their size on a phone.
 */
export function CallTimeline({ timeline, tz }: { timeline: Timeline; tz: string }) {
  const span = timeline.end - timeline.start;
  const pct = (offset: number) => `${((offset / span) * 100).toFixed(3)}%`;
  const ticks = timelineTicks(span);
  return (
    <figure className="chart timeline" data-testid="timeline">
      <p className="sr-only">
        {timeline.rows.map((r) => `${r.uid}: ${r.joined ? `joined ${formatTime(r.joinedAt, tz)}, left ${formatTime(r.leftAt, tz)}` : "never joined"}`).join("; ")}
      </p>
      <ol className="timeline-rows" aria-hidden="true">
        {timeline.rows.map((r, i) => (
          <li key={`${r.uid}-${i}`} className="timeline-row">
            <span className="timeline-label" title={r.uid}>
              {r.uid}
            </span>
            <span className="timeline-track">
              {r.joinOffset !== null && r.leaveOffset !== null ? (
                <span
                  className="timeline-bar"
                  style={{ left: pct(r.joinOffset), width: `max(2px, ${pct(r.leaveOffset - r.joinOffset)})` }}
                  title={`${r.uid}: ${formatTime(r.joinedAt, tz)} – ${formatTime(r.leftAt, tz)}`}
                />
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
