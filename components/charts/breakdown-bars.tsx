import type { BreakdownGroup } from "@/lib/ui/charts";
import { formatCount, formatPercent } from "@/lib/ui/format";

/**
 * Share of calls per value of one dimension, as horizontal bars with their numbers. With
 * `onPick`, a value's name is a button that filters the page to it (drill-down; not
 * "Other", which is no filter value).
 */
export function BreakdownBars({ group, onPick }: { group: BreakdownGroup; onPick?: (dimension: BreakdownGroup["dimension"], value: string) => void }) {
  return (
    <div className="breakdown" data-dimension={group.dimension}>
      <h3>{group.title}</h3>
      {group.items.length === 0 || group.total === 0 ? (
        <p className="muted">No calls.</p>
      ) : (
        <ul>
          {group.items.map((i) => (
            <li key={i.value} data-value={i.value}>
              {onPick && i.value !== "other" ? (
                <button type="button" className="breakdown-label link-button" onClick={() => onPick(group.dimension, i.value)} title={`Only ${group.title.toLowerCase()}: ${i.label}`}>
                  {i.label}
                </button>
              ) : (
                <span className="breakdown-label">{i.label}</span>
              )}
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
