import Link from "next/link";
import type { CallDetail } from "@/lib/analytics";
import { EmptyState, Panel } from "@/components/panel";
import { ScrollBox } from "@/components/scroll-box";
import { label } from "@/lib/platform/labels";
import { formatCount, formatMinutes, formatTime } from "@/lib/ui/format";
import { groupByPerson, peopleCount } from "@/lib/ui/people";

/**
 * Who took part, one row per person: a uid that rejoined (or joined from a second device)
 * is one person whose sessions are listed under them. The platform's `totalParticipants`
 * is shown beside the count where the two differ.
 */
export function ParticipantsPanel({ call, tz }: { call: CallDetail; tz: string }) {
  const people = groupByPerson(call.participants);
  const count = peopleCount(people);
  const multi = people.filter((p) => p.sessions.length > 1).length;
  const callsOf = (uid: string) => `/calls?${new URLSearchParams({ app: call.app, uid, ...(tz !== "UTC" ? { tz } : {}) }).toString()}`;
  return (
    <Panel id="participants" title={`Participants (${formatCount(count.people)})`}>
      <p className="muted hint" data-testid="people-count">
        {formatCount(count.people)} {count.people === 1 ? "person" : "people"}, {formatCount(count.joined)} joined
        {count.sessions > count.people
          ? ` · ${formatCount(count.sessions)} sessions in all: ${formatCount(multi)} ${multi === 1 ? "person" : "people"} rejoined or used a second device, and their sessions are listed under them`
          : ""}
        {call.totalParticipants !== count.joined ? (
          <span data-testid="platform-count">
            {" "}
            · the platform counts {formatCount(call.totalParticipants)} (its totalParticipants)
          </span>
        ) : null}
      </p>
      {people.length === 0 ? (
        <EmptyState>No participant recorded.</EmptyState>
      ) : (
        <ScrollBox label="Participants">
          <table className="data-table" data-testid="participants-table">
            <thead>
              <tr>
                <th scope="col">Participant</th>
                <th scope="col">State</th>
                <th scope="col">Joined</th>
                <th scope="col">Left</th>
                <th scope="col" className="num">Audio</th>
                <th scope="col" className="num">Video</th>
                <th scope="col" className="num">Total</th>
                <th scope="col">Device</th>
              </tr>
            </thead>
            {people.map((p) => (
              <tbody key={p.uid} data-person={p.uid} data-sessions={p.sessions.length}>
                <tr data-uid={p.uid}>
                  <th scope="row">
                    <Link href={callsOf(p.uid)}>{p.uid}</Link>
                    {p.sessions.length > 1 ? <span className="badge session-badge">{p.sessions.length} sessions</span> : null}
                  </th>
                  <td>{p.states.map(label).join(", ") || "—"}</td>
                  <td>{formatTime(p.joinedAt, tz)}</td>
                  <td>{p.joinedAt !== null && p.leftAt === null ? "still in" : formatTime(p.leftAt, tz)}</td>
                  <td className="num">{formatMinutes(p.audioMinutes)}</td>
                  <td className="num">{formatMinutes(p.videoMinutes)}</td>
                  <td className="num">{formatMinutes(p.totalMinutes)}</td>
                  <td className="device-id">{p.devices.join(", ") || "—"}</td>
                </tr>
                {p.sessions.length > 1
                  ? p.sessions.map((s, i) => (
                      <tr key={s.seq} className="session-row" data-session-of={p.uid}>
                        <td>
                          <span className="muted">session {i + 1}</span>
                        </td>
                        <td>{label(s.state)}</td>
                        <td>{formatTime(s.joinedAt, tz)}</td>
                        <td>{s.joinedAt !== null && s.leftAt === null ? "still in" : formatTime(s.leftAt, tz)}</td>
                        <td className="num">{formatMinutes(s.totalAudioMinutes)}</td>
                        <td className="num">{formatMinutes(s.totalVideoMinutes)}</td>
                        <td className="num">{formatMinutes(s.totalDurationMinutes)}</td>
                        <td className="device-id">{s.deviceId ?? "—"}</td>
                      </tr>
                    ))
                  : null}
              </tbody>
            ))}
          </table>
        </ScrollBox>
      )}
    </Panel>
  );
}
