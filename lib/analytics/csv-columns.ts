import { isoColumn, labelColumn, type CsvColumn, type RawCsvColumn } from "@/lib/export/csv-column";
import type {
  AppUsageRow, AwaitingRecordingRow, ClientRow, CombinedParticipantRow, BreakdownRow, CallListRow, DailyUsageRow, DurationBucketRow, EngagementBucketRow, HeatmapCell, ParticipantUsageRow,
  RecordingRow, RecordingSummary, TotalsCsvRow,
} from "./report-types";

/**
 * CSV columns of each report: the JSON rows' keys, in the JSON's order (the table of
 * reports, report-registry.ts, names them; lib/export writes them and knows no report) — the
 * contract: never renamed or moved — then derived columns for people, written by
 * lib/export from the row's own values (no engine computes them): codes as the
 * dashboard labels them (`typeLabel`) and epoch times as ISO 8601 in the filters' zone
 * (`startAtIso`).
 */
const d = "decimal" as const;

export const CALL_COLUMNS: CsvColumn<CallListRow>[] = [
  { key: "app" }, { key: "sessionId" }, { key: "type" }, { key: "mode" }, { key: "status" }, { key: "initiator" }, { key: "receiver" },
  { key: "receiverType" }, { key: "initiatedAt" }, { key: "startedAt" }, { key: "endedAt" }, { key: "startAt" }, { key: "hasRecording" },
  { key: "totalAudioMinutes", kind: d }, { key: "totalVideoMinutes", kind: d }, { key: "totalDurationMinutes", kind: d },
  { key: "durationSeconds" }, { key: "totalParticipants" },
  labelColumn("type"), labelColumn("mode"), labelColumn("status"), labelColumn("receiverType"),
  isoColumn("initiatedAt"), isoColumn("startedAt"), isoColumn("endedAt"), isoColumn("startAt"),
];

/** CALL_COLUMNS for raw rows (an engine's calls CSV: arrays of the data columns, the derived ones written from them): the same headers and formatting. */
export const CALL_RAW_COLUMNS: RawCsvColumn[] = CALL_COLUMNS.map((c) => {
  if ("derived" in c) return { header: c.header, derived: { of: CALL_COLUMNS.findIndex((d) => "key" in d && d.key === c.derived.of), as: c.derived.as } };
  return { header: c.key, kind: c.kind ?? (c.key === "hasRecording" ? "boolean" : undefined) };
});

export const PARTICIPANT_COLUMNS: CsvColumn<ParticipantUsageRow>[] = [
  { key: "app" }, { key: "uid" }, { key: "calls" }, { key: "joined" }, { key: "unanswered" }, { key: "audioMinutes", kind: d },
  { key: "videoMinutes", kind: d }, { key: "totalMinutes", kind: d }, { key: "firstCallAt" }, { key: "lastCallAt" },
  isoColumn("firstCallAt"), isoColumn("lastCallAt"),
];

export const APP_COLUMNS: CsvColumn<AppUsageRow>[] = [
  { key: "app" }, { key: "name" }, { key: "calls" }, { key: "audioMinutes", kind: d }, { key: "videoMinutes", kind: d },
  { key: "totalMinutes", kind: d }, { key: "recordings" }, { key: "participants" },
];

export const DAILY_COLUMNS: CsvColumn<DailyUsageRow>[] = [
  { key: "date" }, { key: "calls" }, { key: "audioMinutes", kind: d }, { key: "videoMinutes", kind: d },
  { key: "avgDurationSeconds", kind: d }, { key: "avgParticipants", kind: d },
];

export const BREAKDOWN_COLUMNS: CsvColumn<BreakdownRow>[] = [
  { key: "dimension" }, { key: "value" }, { key: "calls" }, { key: "audioMinutes", kind: d }, { key: "videoMinutes", kind: d },
  { key: "totalMinutes", kind: d }, labelColumn("dimension"), labelColumn("value"),
];

export const DURATION_COLUMNS: CsvColumn<DurationBucketRow>[] = [
  { key: "bucket" }, { key: "label" }, { key: "minSeconds" }, { key: "maxSeconds" }, { key: "calls" },
];

export const HEATMAP_COLUMNS: CsvColumn<HeatmapCell>[] = [
  { key: "weekday" }, { key: "weekdayName" }, { key: "hour" }, { key: "calls" }, { key: "hours" }, { key: "average", kind: d },
];

export const ENGAGEMENT_COLUMNS: CsvColumn<EngagementBucketRow>[] = [
  { key: "bucket" }, { key: "minCalls" }, { key: "maxCalls" }, { key: "participants" },
];

export const RECORDING_COLUMNS: CsvColumn<RecordingRow>[] = [
  { key: "app" }, { key: "sessionId" }, { key: "recordingUrl" }, { key: "recordingDate" },
  // The webhook's `duration` (seconds, as the dashboard shows it); the header names the unit.
  { key: "duration", header: "durationSeconds", kind: d },
  { key: "startTime" }, { key: "receivedMs" }, { key: "callKnown" }, { key: "callType" }, { key: "callStartAt" },
  labelColumn("callType"), isoColumn("startTime"), { header: "receivedAtIso", derived: { of: "receivedMs", as: "isoMs" } }, isoColumn("callStartAt"),
];

export const AWAITING_RECORDING_COLUMNS: CsvColumn<AwaitingRecordingRow>[] = [
  { key: "app" }, { key: "sessionId" }, { key: "type" }, { key: "mode" }, { key: "status" }, { key: "initiator" }, { key: "receiver" },
  { key: "receiverType" }, { key: "startAt" }, { key: "endedAt" }, { key: "durationSeconds" },
  labelColumn("type"), labelColumn("mode"), labelColumn("status"), labelColumn("receiverType"), isoColumn("startAt"), isoColumn("endedAt"),
];

export const RECORDING_SUMMARY_COLUMNS: CsvColumn<RecordingSummary>[] = [
  { key: "flagged" }, { key: "withLink" }, { key: "awaiting" }, { key: "linkNotFlagged" }, { key: "links" }, { key: "linksForUnsyncedCalls" },
];

export const TOTALS_COLUMNS: CsvColumn<TotalsCsvRow>[] = [
  { key: "period" }, { key: "calls" }, { key: "audioMinutes", kind: d }, { key: "videoMinutes", kind: d },
  { key: "totalMinutes", kind: d }, { key: "avgDurationSeconds", kind: d }, { key: "avgParticipants", kind: d },
  { key: "recordingShare", kind: d }, { key: "unansweredRate", kind: d },
];

export const CLIENT_COLUMNS: CsvColumn<ClientRow>[] = [
  { key: "app" }, { key: "dimension" }, { key: "value" }, { key: "sessions" }, { key: "calls" }, { key: "share", kind: d },
];

/** `apps` as one cell: the app ids separated by commas (so the cell is quoted). */
export const COMBINED_PARTICIPANT_COLUMNS: CsvColumn<CombinedParticipantRow>[] = [
  { key: "uid" }, { key: "apps" }, { key: "calls" }, { key: "joined" }, { key: "unanswered" }, { key: "audioMinutes", kind: d },
  { key: "videoMinutes", kind: d }, { key: "totalMinutes", kind: d }, { key: "firstCallAt" }, { key: "lastCallAt" },
  isoColumn("firstCallAt"), isoColumn("lastCallAt"),
];
