/**
 * The numbers a statement prices, read ONLY through the analytics engine interface
 * (`analyticsEngine().report`), so statements work on either engine: the "apps" report
 * over the month's `[from, to)` for calls, participant-minutes and recordings, and the
 * "participants" report for the per-uid detail. Minutes arrive rounded to the
 * thousandth and become exact decimals here.
 */
import { filters, type Scope } from "@/lib/analytics";
import { analyticsEngine } from "@/lib/analytics/engine";
import { fromThousandths, minutesText } from "./money";
import type { MonthRange } from "./month";
import type { Usage } from "./pricing";

export const NO_USAGE: Usage = { calls: 0, audioMinutes: "0.000", videoMinutes: "0.000", recordings: 0, participants: 0 };

/** Usage per app id of the month, for the given apps (each must be visible in `scope`). */
export async function monthUsage(range: MonthRange, appIds: readonly string[], scope: Scope): Promise<Map<string, Usage>> {
  const out = new Map<string, Usage>();
  if (appIds.length === 0) return out;
  const report = await analyticsEngine().report("apps", filters({ apps: [...appIds], from: range.from, to: range.to, tz: range.tz }), scope);
  for (const row of report.data) {
    out.set(row.app, {
      calls: row.calls,
      // The report's per-call totals: every joined participant-second, as audio in an audio call and video in a video call.
      audioMinutes: minutesText(fromThousandths(row.audioMinutes)),
      videoMinutes: minutesText(fromThousandths(row.videoMinutes)),
      recordings: row.recordings,
      participants: row.participants,
    });
  }
  return out;
}

export interface ParticipantUsage {
  uid: string;
  calls: number;
  audioMinutes: string;
  videoMinutes: string;
}

/** Engine pages are at most this long. */
const PAGE = 1000;

/** Per participant uid of one app in the month, most minutes first (then uid). */
export async function participantUsage(range: MonthRange, appId: string, scope: Scope): Promise<ParticipantUsage[]> {
  const rows: ParticipantUsage[] = [];
  for (let page = 1; ; page++) {
    const f = filters({ apps: [appId], from: range.from, to: range.to, tz: range.tz, sort: "minutes", page, perPage: PAGE });
    const answer = await analyticsEngine().report("participants", f, scope);
    for (const p of answer.data) {
      rows.push({ uid: p.uid, calls: p.calls, audioMinutes: minutesText(fromThousandths(p.audioMinutes)), videoMinutes: minutesText(fromThousandths(p.videoMinutes)) });
    }
    if (page >= answer.meta.pagination.total_pages) break;
  }
  return rows;
}
