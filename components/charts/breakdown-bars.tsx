import type { BreakdownGroup } from "@/lib/ui/charts";
import { formatCount, formatPercent } from "@/lib/ui/format";

/** Share of calls per value of one dimension, as horizontal bars with their numbers. */
export function BreakdownBars({ group }: { group: BreakdownGroup }) {
  return (
    <div className="breakdown" data-dimension={group.dimension}>
      <h3>{group.title}</h3>
      {group.items.length === 0 || group.total === 0 ? (
        <p className="muted">No calls.</p>
      ) : (
        <ul>
          {group.items.map((i) => (
            <li key={i.value} data-value={i.value}>
              <span className="breakdown-label">{i.label}</span>
              <span className="breakdown-track" aria-hidden="true">
                <span className="breakdown-fill" style={{ width: `${Math.max(i.share * 100, i.calls ? 1 : 0)}%` }} />
              </span>
              <span className="breakdown-value num">
                {formatCount(i.calls)} <span className="muted">{formatPercent(i.share)}</span>
              </span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
