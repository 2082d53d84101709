import type { KpiTile } from "@/lib/ui/charts";

/** KPI tiles: value, and its change against the previous period (green when good). */
export function KpiTiles({ tiles, comparing, against = "the previous period" }: { tiles: KpiTile[]; comparing: boolean; against?: string }) {
  return (
    <ul className="kpi-tiles" aria-label="Key figures">
      {tiles.map((t) => {
        const good = t.change.direction === "flat" || t.change.direction === "none" ? "neutral" : (t.change.direction === "up") === t.higherIsBetter ? "good" : "bad";
        return (
          <li key={t.key} className="kpi" data-testid={`kpi-${t.key}`}>
            <span className="kpi-label">{t.label}</span>
            <span className="kpi-value" data-testid="kpi-value">
              {t.value}
            </span>
            {comparing ? (
              <span className={`kpi-change ${good}`} title={t.previous !== null ? `${against[0].toUpperCase()}${against.slice(1)}: ${t.previous}` : undefined}>
                {t.change.label}
                <span className="sr-only"> against {against}{t.previous !== null ? ` (${t.previous})` : ""}</span>
              </span>
            ) : null}
          </li>
        );
      })}
    </ul>
  );
}
