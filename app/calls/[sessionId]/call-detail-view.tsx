import Link from "next/link";
import type { CallDetail } from "@/lib/analytics";
import { ParticipantMinutesChart } from "@/components/charts/participant-minutes";
import { CallTimeline } from "@/components/charts/timeline";
import { CallDuration } from "@/components/call-duration";
import { EmptyState, Panel } from "@/components/panel";
import { callsListHref } from "@/lib/ui/carry";
import { callTimeline, participantMinutes } from "@/lib/ui/charts";
import { label } from "@/lib/platform/labels";
import { formatDateTime, formatMinutes } from "@/lib/ui/format";
import { CallClientsPanel } from "./clients-panel";
import { EventsPanel } from "./events-panel";
import { ParticipantsPanel } from "./participants-panel";
import { RecordingPanel } from "./recording-panel";

/** One call: facts, who took part (join/leave, minutes, device), the timeline, what each joined with, its recordings, its webhook events, the raw record. */
export function CallDetailView({ call, tz, isAdmin, back }: { call: CallDetail; tz: string; isAdmin: boolean; back?: string }) {
  const timeline = callTimeline(call);
  return (
    <>
      <p className="breadcrumb">
        <Link href={callsListHref(back, call.app, tz)}>{back !== undefined ? "← Back to the calls list" : `← Calls of ${call.app}`}</Link>
      </p>
      <h1>
        Call <span className="mono session-id">{call.sessionId}</span>
      </h1>
      <section className="card panel" aria-labelledby="facts-title">
        <h2 id="facts-title" className="sr-only">Facts</h2>
        <p className="muted hint" data-testid="call-zone">Times in {tz}.</p>
        <dl className="facts" data-testid="call-facts">
          <div><dt>App</dt><dd>{call.app}</dd></div>
          <div><dt>Type</dt><dd>{label(call.type)}</dd></div>
          <div><dt>Mode</dt><dd>{label(call.mode)}</dd></div>
          <div><dt>Status</dt><dd><span className={`status status-${call.status ?? "other"}`}>{label(call.status)}</span></dd></div>
          <div><dt>Initiator</dt><dd>{call.initiator ?? "—"}</dd></div>
          <div><dt>Receiver</dt><dd>{call.receiver ?? "—"} <span className="muted">({label(call.receiverType)})</span></dd></div>
          <div><dt>Initiated</dt><dd>{formatDateTime(call.initiatedAt, tz)}</dd></div>
          <div><dt>Started</dt><dd>{formatDateTime(call.startedAt, tz)}</dd></div>
          <div><dt>Ended</dt><dd>{formatDateTime(call.endedAt, tz)}</dd></div>
          <div><dt>Duration</dt><dd><CallDuration status={call.status} startedAt={call.startedAt} durationSeconds={call.durationSeconds} /></dd></div>
          <div><dt>Participant minutes, audio</dt><dd>{formatMinutes(call.totalAudioMinutes)}</dd></div>
          <div><dt>Participant minutes, video</dt><dd>{formatMinutes(call.totalVideoMinutes)}</dd></div>
        </dl>
      </section>

      <ParticipantsPanel call={call} tz={tz} />

      <div className="grid-2">
        <Panel id="timeline" title="Joins and leaves">
          {timeline ? <CallTimeline timeline={timeline} tz={tz} /> : <EmptyState>Nobody joined this call.</EmptyState>}
        </Panel>
        <Panel id="minutes" title="Minutes per person">
          <ParticipantMinutesChart rows={participantMinutes(call)} />
        </Panel>
      </div>

      <CallClientsPanel call={call} tz={tz} />

      <RecordingPanel call={call} tz={tz} isAdmin={isAdmin} />

      <EventsPanel call={call} tz={tz} isAdmin={isAdmin} />

      <details className="card panel raw-record">
        <summary>Raw record (for support)</summary>
        {call.raw ? (
          <pre>{JSON.stringify(call.raw, null, 2)}</pre>
        ) : (
          <p className="muted">The platform&apos;s record has not been synced yet: this call is known from webhooks only.</p>
        )}
      </details>
    </>
  );
}
