/**
 * The answers of every report, engine-agnostic: the JSON rows each route sends, the
 * same rows the CSV columns name (report-csv-writers.ts), and the few constants that define what a
 * report counts. Every engine (lib/analytics/engines/*) produces exactly these.
 */
import type { CallEventRow } from "@/lib/ingest/call-events";
import type { DimensionName } from "./dims";

export type { CallEventRow };

/** Decimal values are sent rounded to thousandths (minutes, averages, shares). */
export const round3 = (x: number): number => Math.round(x * 1000) / 1000;

/** One call, named the way the call detail route names it: `GET /api/v1/calls/{sessionId}?app=`. */
export interface CallRef {
  app: string;
  sessionId: string;
}

/** A paged answer: `{data, meta: {pagination}}`, like the platform's own API. */
export function pageOf<T>(data: T[], total: number, f: { page: number; perPage: number }): Page<T> {
  return { data, meta: { pagination: { total, count: data.length, per_page: f.perPage, current_page: f.page, total_pages: Math.ceil(total / f.perPage) } } };
}

/** One call of the list (and of the CSV), as Callboard stores it. */
export interface CallListRow {
  app: string;
  sessionId: string;
  type: string | null;
  mode: string | null;
  status: string | null;
  initiator: string | null;
  receiver: string | null;
  receiverType: string | null;
  initiatedAt: number | null;
  startedAt: number | null;
  endedAt: number | null;
  /** startedAt, or initiatedAt for calls never started: what time filters use. */
  startAt: number;
  hasRecording: boolean;
  totalAudioMinutes: number;
  totalVideoMinutes: number;
  totalDurationMinutes: number;
  durationSeconds: number;
  totalParticipants: number;
}

export interface Pagination {
  total: number;
  count: number;
  per_page: number;
  current_page: number;
  total_pages: number;
}

export interface Page<T> {
  data: T[];
  meta: { pagination: Pagination };
}

export interface CallParticipantDetail {
  seq: number;
  uid: string;
  state: string | null;
  isJoined: boolean;
  joinedAt: number | null;
  leftAt: number | null;
  totalAudioMinutes: number;
  totalVideoMinutes: number;
  totalDurationMinutes: number;
  deviceId: string | null;
  mid: string | null;
}

export interface RecordingDetail {
  recordingUrl: string;
  recordingDate: string | null;
  duration: number | null;
  startTime: number | null;
  receivedMs: number;
}

export interface CallDetail extends CallListRow {
  mid: string | null;
  source: string;
  /** The platform's record exactly as the sync last received it (null for a call known only from webhooks). */
  raw: Record<string, unknown> | null;
  participants: CallParticipantDetail[];
  recordings: RecordingDetail[];
  /** Every webhook event received for the session, in the order they happened (lib/ingest/call-events.ts). */
  events: CallEventRow[];
  /** What each participant session joined with, from the join webhooks (lib/analytics/clients.ts). */
  clients: CallClientRow[];
}

/** One participant session of a call and what it joined with (the clients report's values; `unknown`: not said). */
export interface CallClientRow {
  /** The occupant's name as the webhooks give it ('' when they did not). */
  occupant: string;
  joinedAt: number | null;
  leftAt: number | null;
  platform: string;
  sdk: string;
  media: string;
  videoMuted: string;
}

/** Per participant (per app: a uid is an app's user). Minutes are summed from the
 * participant rows' own totalAudioMinutes / totalVideoMinutes / totalDuration. */
export interface ParticipantUsageRow {
  app: string;
  uid: string;
  /** Distinct calls the uid is listed in. */
  calls: number;
  /** Distinct calls the uid joined. */
  joined: number;
  /** Distinct calls where the uid's row is `unanswered`. */
  unanswered: number;
  audioMinutes: number;
  videoMinutes: number;
  /** The participant rows' totalDuration (decimal minutes). */
  totalMinutes: number;
  firstCallAt: number | null;
  lastCallAt: number | null;
}

export interface AppUsageRow {
  app: string;
  name: string;
  calls: number;
  audioMinutes: number;
  videoMinutes: number;
  /** audioMinutes + videoMinutes. */
  totalMinutes: number;
  /** Calls with a recording (platform flag or a recording webhook). */
  recordings: number;
  /** Distinct uids listed in the app's matching calls. */
  participants: number;
}

export interface DailyUsageRow {
  /** Local date `YYYY-MM-DD` in `tz`. */
  date: string;
  calls: number;
  audioMinutes: number;
  videoMinutes: number;
  /** Mean of the calls' totalDuration, in seconds (0 on a day without calls). */
  avgDurationSeconds: number;
  /** Mean totalParticipants per call. */
  avgParticipants: number;
}

/** Calls that run longer than this many 15-minute boundaries stop counting in the
 * heatmap after it (about 104 days). */
export const MAX_CROSSINGS = 10_000;

export interface Totals {
  calls: number;
  audioMinutes: number;
  videoMinutes: number;
  /** audioMinutes + videoMinutes. */
  totalMinutes: number;
  avgDurationSeconds: number;
  avgParticipants: number;
  /** Share (0..1) of calls with a recording. */
  recordingShare: number;
  /** Share (0..1) of calls with status `unanswered`. */
  unansweredRate: number;
}

/** A row of the totals CSV: one per period. */
export type TotalsCsvRow = Totals & { period: "current" | "previous" };

export interface TotalsReport {
  current: Totals;
  /** The same filters over the equally long period just before [from, to); null without both bounds. */
  previous: Totals | null;
  previousRange: { from: number; to: number } | null;
}

export interface BreakdownRow {
  dimension: DimensionName | "hasRecording";
  value: string;
  calls: number;
  audioMinutes: number;
  videoMinutes: number;
  totalMinutes: number;
}

export interface DurationBucketRow {
  bucket: string;
  label: string;
  /** Inclusive lower bound, seconds. */
  minSeconds: number;
  /** Exclusive upper bound, seconds (null: no bound). */
  maxSeconds: number | null;
  calls: number;
}

export interface HeatmapCell {
  /** 0 = Sunday … 6 = Saturday, in `tz`. */
  weekday: number;
  weekdayName: string;
  /** 0..23, local hour in `tz`. */
  hour: number;
  /** Sum over the window's hours of the calls overlapping that hour. */
  calls: number;
  /** How many such hours the window holds (divide for an average). */
  hours: number;
  /** calls / hours. */
  average: number;
}

export interface EngagementBucketRow {
  bucket: string;
  /** Inclusive bounds on the number of calls a participant is listed in (max null: no bound). */
  minCalls: number;
  maxCalls: number | null;
  participants: number;
}

export const ENGAGEMENT_BUCKETS = [
  [1, 1], [2, 5], [6, 10], [11, 25], [26, 50], [51, 100], [101, null],
] as const satisfies ReadonlyArray<readonly [number, number | null]>;

export interface RecordingRow {
  app: string;
  sessionId: string;
  recordingUrl: string;
  recordingDate: string | null;
  /** Seconds, as the webhook's `duration`. */
  duration: number | null;
  /** The webhook's `startTime` (epoch seconds). */
  startTime: number | null;
  receivedMs: number;
  /** False while the call is not synced yet. */
  callKnown: boolean;
  callType: string | null;
  callStartAt: number | null;
}

/**
 * Two facts about a call's recording, kept apart because they often disagree: the
 * platform's `hasRecording` flag (from the Calls API) and a link received by a
 * `recording_generated` webhook. A flagged call has no link until that webhook arrives
 * (or never, when the app's webhook is not configured for it).
 */
export interface RecordingFacts {
  /** The platform's hasRecording flag. */
  flagged: boolean;
  /** Links received by webhook. */
  links: number;
}

/** A row of the calls list's JSON: the call, and its two recording facts (`hasRecording`, what the filter uses, is either). */
export type CallListJsonRow = CallListRow & { recording: RecordingFacts };

/** What the platform flags and what the webhooks delivered, for the calls matching the filters. */
export interface RecordingSummary {
  /** Calls the platform flags as recorded. */
  flagged: number;
  /** Calls with at least one link received. */
  withLink: number;
  /** Flagged calls with no link yet. */
  awaiting: number;
  /** Calls with a link that the platform does not flag (yet). */
  linkNotFlagged: number;
  /** Links received for these calls (a call can have several). */
  links: number;
  /** Links for calls not synced yet (in the period, by the recording's start; only without call filters). */
  linksForUnsyncedCalls: number;
}

/** One flagged call still waiting for its recording's link (newest first): the call's own fields. */
export type AwaitingRecordingRow = Pick<
  CallListRow,
  "app" | "sessionId" | "type" | "mode" | "status" | "initiator" | "receiver" | "receiverType" | "startAt" | "endedAt" | "durationSeconds"
>;

/** What a participant session joined with (the join webhooks' `initial_config`): the dimensions of the clients report. */
export const CLIENT_DIMENSIONS = ["platform", "sdk", "media", "videoMuted"] as const;
export type ClientDimension = (typeof CLIENT_DIMENSIONS)[number];

/** One value of one client dimension in one app: participant sessions that joined with it, the calls they were in, their share of the app's sessions. */
export interface ClientRow {
  app: string;
  dimension: ClientDimension;
  /** platform (`web`, `android`…), sdk with its call version (`web 4`), `audio only` / `video`, `camera off` / `camera on`; `unknown` when the join did not say. */
  value: string;
  sessions: number;
  calls: number;
  /** sessions / the app's sessions, 0..1 (rounded to thousandths). */
  share: number;
}

/** One uid across every app it is used in: the participants report's rows of that uid, summed; `apps` sorted. */
export type CombinedParticipantRow = Omit<ParticipantUsageRow, "app"> & { apps: string[] };
