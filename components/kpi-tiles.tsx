import type { ReactNode } from "react";
import type { KpiTile } from "@/lib/ui/charts";

/** A row of key figures (the overview's, the ops pages'): a list of `Kpi`s. */
export function KpiList({ className, children }: { className?: string; children: ReactNode }) {
  return (
    <ul className={className ? `kpi-tiles ${className}` : "kpi-tiles"} aria-label="Key figures">
      {children}
    </ul>
  );
}

/** One key figure: its label and value, and (the overview's) what it changed by. */
export function Kpi({ label, value, tileTestId, valueTestId, children }: { label: string; value: ReactNode; tileTestId?: string; valueTestId?: string; children?: ReactNode }) {
  return (
    <li className="kpi" data-testid={tileTestId}>
      <span className="kpi-label">{label}</span>
      <span className="kpi-value" data-testid={valueTestId}>
        {value}
      </span>
      {children}
    </li>
  );
}

/** KPI tiles: value, and its change against the previous period (green when good). */
export function KpiTiles({ tiles, comparing, against = "the previous period" }: { tiles: KpiTile[]; comparing: boolean; against?: string }) {
  return (
    <KpiList>
      {tiles.map((t) => {
        const good = t.change.direction === "flat" || t.change.direction === "none" ? "neutral" : (t.change.direction === "up") === t.higherIsBetter ? "good" : "bad";
        return (
          <Kpi key={t.key} label={t.label} value={t.value} tileTestId={`kpi-${t.key}`} valueTestId="kpi-value">
            {comparing ? (
              <span className={`kpi-change ${good}`} title={t.previous !== null ? `${against[0].toUpperCase()}${against.slice(1)}: ${t.previous}` : undefined}>
                {t.change.label}
                <span className="sr-only"> against {against}{t.previous !== null ? ` (${t.previous})` : ""}</span>
              </span>
            ) : null}
          </Kpi>
        );
      })}
    </KpiList>
  );
}
