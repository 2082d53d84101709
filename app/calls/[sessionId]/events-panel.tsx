import Link from "next/link";
import type { CallDetail, CallEventRow } from "@/lib/analytics";
import { EmptyState, Panel } from "@/components/panel";
import { ScrollBox } from "@/components/scroll-box";
import { formatCount, formatDateTime, formatSeconds } from "@/lib/ui/format";

/** What a trigger means, in the dashboard's words. */
const EVENT_LABEL: Record<string, string> = {
  call_initiated: "Initiated", call_started: "Started", meeting_started: "Started",
  call_participant_joined: "Joined", meeting_participant_joined: "Joined",
  call_participant_left: "Left", meeting_participant_left: "Left",
  call_ended: "Ended", meeting_ended: "Ended", recording_generated: "Recording link",
};

const when = (e: CallEventRow) => e.at ?? Math.floor(e.receivedMs / 1000);

/** The first event of these triggers, if any. */
const first = (events: CallEventRow[], triggers: string[]) => events.find((e) => triggers.includes(e.trigger));

/**
 * Every webhook event received for this session, in the order they happened, beside
 * what the Calls API says: support sees what happened and where the two disagree.
 */
export function EventsPanel({ call, tz, isAdmin }: { call: CallDetail; tz: string; isAdmin: boolean }) {
  const events = call.events;
  const started = first(events, ["call_started", "meeting_started"]);
  const ended = first(events, ["call_ended", "meeting_ended"]);
  const joins = events.filter((e) => e.trigger.endsWith("_participant_joined")).length;
  const time = (t: number | null | undefined) => (t === null || t === undefined ? "—" : formatDateTime(t, tz, { seconds: true }));
  return (
    <Panel id="events" title={`Webhook events (${formatCount(events.length)})`}>
      <dl className="facts compare" data-testid="events-compare">
        <div><dt>Started</dt><dd>Calls API {time(call.startedAt)} · webhook {started ? time(when(started)) : "none"}</dd></div>
        <div><dt>Ended</dt><dd>Calls API {time(call.endedAt)} · webhook {ended ? time(when(ended)) : "none"}</dd></div>
        <div><dt>People</dt><dd>Calls API {formatCount(call.totalParticipants)} · joins received {formatCount(joins)}</dd></div>
      </dl>
      {events.length === 0 ? (
        <EmptyState>
          No webhook event was received for this call: the app&apos;s webhook may not send call events, or they are older than the 90 days kept.
          {isAdmin ? <> <Link href="/settings/apps">Webhook settings</Link></> : null}
        </EmptyState>
      ) : (
        <ScrollBox label="Webhook events of this call">
          <table className="data-table" data-testid="call-events">
            <thead>
              <tr>
                <th scope="col">When ({tz})</th>
                <th scope="col">Event</th>
                <th scope="col">Who</th>
                <th scope="col">Detail</th>
                <th scope="col">Received</th>
              </tr>
            </thead>
            <tbody>
              {events.map((e, i) => {
                const late = e.at === null ? null : Math.floor(e.receivedMs / 1000) - e.at;
                return (
                  <tr key={i} data-trigger={e.trigger}>
                    <td>{time(when(e))}{e.at === null ? <span className="muted"> (received)</span> : null}</td>
                    <td title={e.trigger}>{EVENT_LABEL[e.trigger] ?? e.trigger}</td>
                    {/* A long name or detail wraps in its cell instead of pushing Detail and Received off screen. */}
                    <td className="cell-wrap">{e.who ?? "—"}</td>
                    <td className="cell-wrap">{e.durationSeconds !== null ? formatSeconds(e.durationSeconds) : (e.detail ?? "")}</td>
                    <td className="muted">
                      {late !== null && late > 60 ? `${formatSeconds(late)} later` : "at once"}
                      {e.repeats > 0 ? ` · repeated ${formatCount(e.repeats)}×` : ""}
                      {e.outcome !== "applied" ? ` · ${e.outcome}` : ""}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </ScrollBox>
      )}
    </Panel>
  );
}
