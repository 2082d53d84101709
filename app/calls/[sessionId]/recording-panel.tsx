import Link from "next/link";
import type { CallDetail } from "@/lib/analytics";
import { Panel } from "@/components/panel";
import { WHY_NO_LINK } from "@/components/recording-facts";
import { formatDateTime, formatSeconds } from "@/lib/ui/format";
import { RecordingLink } from "@/components/recording-link";

/** The platform's `hasRecording` as its record says it (null: the call is known from webhooks only). */
function platformFlag(call: CallDetail): boolean | null {
  if (!call.raw) return null;
  const v = call.raw.hasRecording;
  return v === true || v === "true" || v === 1;
}

/** A call's recording: what the platform flags, the links received, and why one may be missing. */
export function RecordingPanel({ call, tz, isAdmin }: { call: CallDetail; tz: string; isAdmin: boolean }) {
  const flagged = platformFlag(call);
  const links = call.recordings;
  return (
    <Panel id="recordings" title={`Recording links (${links.length})`}>
      <dl className="facts" data-testid="recording-facts">
        <div>
          <dt>Flagged by the platform</dt>
          <dd data-testid="rec-flag">{flagged === null ? "not synced yet" : flagged ? "Yes" : "No"}</dd>
        </div>
        <div>
          <dt>Links received</dt>
          <dd data-testid="rec-links">{links.length}</dd>
        </div>
      </dl>
      {links.length === 0 ? (
        <p className="muted hint" data-testid="rec-missing">
          {flagged ? "The platform flags this call as recorded, but no link has been received yet. " : "No recording link for this call. "}
          {WHY_NO_LINK}
          {isAdmin ? <> <Link href="/settings/apps">Webhook settings</Link></> : null}
        </p>
      ) : (
        <ul className="recording-list section">
          {links.map((r) => (
            <li key={r.recordingUrl}>
              <RecordingLink url={r.recordingUrl}>Recording of {formatDateTime(r.startTime, tz)}</RecordingLink>{" "}
              <span className="muted">{r.duration !== null ? formatSeconds(r.duration) : ""}</span>
            </li>
          ))}
        </ul>
      )}
    </Panel>
  );
}
