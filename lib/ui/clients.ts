/**
 * The clients report as the Apps page shows it: per dimension (platform, SDK, media,
 * camera), one row per value with each app's share of its participant sessions.
 */
import type { ClientDimension, ClientRow } from "@/lib/analytics/report-types";

export const CLIENT_DIMENSION_LABEL: Record<ClientDimension, string> = { platform: "Platform", sdk: "SDK and version", media: "Audio only or video", videoMuted: "Camera at join" };

export interface ClientTable {
  dimension: ClientDimension;
  apps: string[];
  rows: Array<{ value: string; total: number; byApp: Record<string, { sessions: number; share: number } | undefined> }>;
}

export function clientTables(rows: readonly ClientRow[]): ClientTable[] {
  const apps = [...new Set(rows.map((r) => r.app))].sort();
  const byDim = new Map<ClientDimension, Map<string, ClientTable["rows"][number]>>();
  for (const r of rows) {
    const values = byDim.get(r.dimension) ?? new Map();
    const row = values.get(r.value) ?? { value: r.value, total: 0, byApp: {} };
    row.total += r.sessions;
    row.byApp[r.app] = { sessions: r.sessions, share: r.share };
    values.set(r.value, row);
    byDim.set(r.dimension, values);
  }
  return [...byDim].map(([dimension, values]) => ({
    dimension,
    apps,
    // Most used first; "unknown" (the join did not say) last.
    rows: [...values.values()].sort((a, b) => Number(a.value === "unknown") - Number(b.value === "unknown") || b.total - a.total || a.value.localeCompare(b.value)),
  }));
}
