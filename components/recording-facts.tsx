import Link from "next/link";
import type { RecordingFacts, RecordingSummary } from "@/lib/analytics";
import { formatCount } from "@/lib/ui/format";

/**
 * A call's recording as two facts: the platform's flag (Calls API `hasRecording`) and
 * the link a `recording_generated` webhook delivered. They differ until that webhook
 * arrives, and for good when the app's webhook does not send it.
 */

/** Why a flagged call can have no link: said wherever the two facts are shown. */
export const WHY_NO_LINK =
  "Links arrive by the recording_generated webhook, after the call ends. A flagged call without one: the app's webhook is not configured to send recordings, or has not delivered this one yet.";

/** The calls table's recording cell: link received, flagged and awaiting, or none. */
export function RecordingBadge({ facts }: { facts: RecordingFacts }) {
  if (facts.links > 0) {
    return (
      <span className="rec rec-link" title={`${facts.flagged ? "Flagged by the platform; " : "Not flagged by the platform; "}link received`} data-rec="link">
        ● Link
      </span>
    );
  }
  if (facts.flagged) {
    return (
      <span className="rec rec-awaiting" title={`Flagged by the platform; no link received yet. ${WHY_NO_LINK}`} data-rec="awaiting">
        ○ Flagged
      </span>
    );
  }
  return (
    <span className="muted" data-rec="none">
      –<span className="sr-only">no recording</span>
    </span>
  );
}

/** One line: flagged, with a link, awaiting (a link to them), for the calls of the filters. */
export function RecordingSummaryLine({ summary, awaitingHref }: { summary: RecordingSummary; awaitingHref: string }) {
  return (
    <p className="hint recording-summary" data-testid="recording-summary">
      Recordings: <strong data-testid="rec-flagged">{formatCount(summary.flagged)}</strong> calls flagged by the platform ·{" "}
      <strong data-testid="rec-with-link">{formatCount(summary.withLink)}</strong> with a link received ·{" "}
      {summary.awaiting > 0 ? (
        <Link href={awaitingHref} data-testid="rec-awaiting">
          {formatCount(summary.awaiting)} awaiting their link
        </Link>
      ) : (
        <span data-testid="rec-awaiting">0 awaiting their link</span>
      )}
      {summary.linkNotFlagged > 0 ? <> · {formatCount(summary.linkNotFlagged)} with a link the platform does not flag</> : null}
      <span className="muted"> — {WHY_NO_LINK}</span>
    </p>
  );
}
