"use client";

import type { AppOption } from "@/components/filter-bar";
import { CsvLink, EmptyState, Panel } from "@/components/panel";
import { QueryState } from "@/components/query-state";
import { ScrollBox } from "@/components/scroll-box";
import { useReport } from "@/components/use-report";
import { CLIENT_DIMENSION_LABEL, clientTables } from "@/lib/ui/clients";
import { formatCount, formatPercent } from "@/lib/ui/format";
import { csvUrl } from "@/lib/ui/reports";

/**
 * What participants joined with, per app: platform, SDK and version, audio only or
 * video, camera at join (the join webhooks' initial_config, for the filters' period).
 */
export function ClientsPanel({ apps, query }: { apps: AppOption[]; query: URLSearchParams }) {
  const clients = useReport("clients", query);
  const name = new Map(apps.map((a) => [a.appId, a.name || a.appId]));
  return (
    <Panel id="clients" title="Clients and platforms" actions={<CsvLink href={csvUrl("clients", query)} what="clients and platforms" />}>
      <p className="muted hint">
        Participant sessions by what they joined with, from the join webhooks (every join ever received); each app&apos;s share of its sessions.
      </p>
      <QueryState query={clients} height={160}>
        {(d) =>
          d.data.length === 0 ? (
            <EmptyState>No join webhook in this period: the apps&apos; webhooks may not send participant events.</EmptyState>
          ) : (
            <div className="clients-grid">
              {clientTables(d.data).map((t) => (
                <ScrollBox key={t.dimension} label={CLIENT_DIMENSION_LABEL[t.dimension]}>
                  <table className="data-table wrap-heads" data-testid={`clients-${t.dimension}`}>
                    <caption className="table-caption">{CLIENT_DIMENSION_LABEL[t.dimension]}</caption>
                    <thead>
                      <tr>
                        <th scope="col">Value</th>
                        {t.apps.map((a) => (
                          <th key={a} scope="col" className="num">{name.get(a) ?? a}</th>
                        ))}
                      </tr>
                    </thead>
                    <tbody>
                      {t.rows.map((r) => (
                        <tr key={r.value} data-value={r.value}>
                          <th scope="row">{r.value}</th>
                          {t.apps.map((a) => {
                            const c = r.byApp[a];
                            return (
                              <td key={a} className="num" data-app={a} title={c ? `${formatCount(c.sessions)} sessions` : undefined}>
                                {c ? formatPercent(c.share) : "—"}
                              </td>
                            );
                          })}
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </ScrollBox>
              ))}
            </div>
          )
        }
      </QueryState>
    </Panel>
  );
}
