import type { CallDetail } from "@/lib/analytics";
import { EmptyState, Panel } from "@/components/panel";
import { ScrollBox } from "@/components/scroll-box";
import { formatCount, formatDateTime } from "@/lib/ui/format";

/**
 * What each participant session joined with (the join webhooks' initial_config, kept per
 * session: it outlives the raw events' 90 days). Occupants are named as the webhooks name
 * them, which need not be the Calls API's uid.
 */
export function CallClientsPanel({ call, tz }: { call: CallDetail; tz: string }) {
  const rows = call.clients;
  const time = (t: number | null) => (t === null ? "—" : formatDateTime(t, tz, { seconds: true }));
  return (
    <Panel id="call-clients" title={`Clients (${formatCount(rows.length)})`}>
      {rows.length === 0 ? (
        <EmptyState>No join webhook was received for this call: the app&apos;s webhook may not send participant events.</EmptyState>
      ) : (
        <ScrollBox label="Clients of this call">
          <table className="data-table" data-testid="call-clients">
            <thead>
              <tr>
                <th scope="col">Participant (webhook name)</th>
                <th scope="col">Joined ({tz})</th>
                <th scope="col">Left</th>
                <th scope="col">Platform</th>
                <th scope="col">SDK</th>
                <th scope="col">Media</th>
                <th scope="col">Camera at join</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r, i) => (
                <tr key={i} data-occupant={r.occupant}>
                  <th scope="row">{r.occupant || "—"}</th>
                  <td>{time(r.joinedAt)}</td>
                  <td>{r.joinedAt !== null && r.leftAt === null ? "—" : time(r.leftAt)}</td>
                  <td>{r.platform}</td>
                  <td>{r.sdk}</td>
                  <td>{r.media}</td>
                  <td>{r.videoMuted}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      )}
    </Panel>
  );
}
