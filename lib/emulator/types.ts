// Wire types of the platform's Calls API as the emulator serves them (seed "Call record"
// and "Call participant"). Optional fields are ABSENT on the wire, never null.

export type CallType = "audio" | "video";
export type CallMode = "call" | "meet" | "presenter";
export type CallStatus = "ended" | "unanswered" | "rejected" | "ongoing";
export type ReceiverType = "user" | "group";
export type Region = "us" | "eu" | "in";

export const CALL_TYPES: readonly CallType[] = ["audio", "video"];
export const CALL_MODES: readonly CallMode[] = ["call", "meet", "presenter"];
export const CALL_STATUSES: readonly CallStatus[] = ["ended", "unanswered", "rejected", "ongoing"];
export const RECEIVER_TYPES: readonly ReceiverType[] = ["user", "group"];
export const REGIONS: readonly Region[] = ["us", "eu", "in"];

export interface CallParticipant {
  uid: string;
  /** "ended" | "unanswered"; "ongoing" while still in an ongoing call (our choice). */
  state: string;
  isJoined: boolean;
  totalAudioMinutes: number;
  totalVideoMinutes: number;
  /** Decimal minutes (a number here, unlike the call's "HH:MM:SS"). */
  totalDuration: number;
  deviceId?: string;
  joinedAt?: number;
  leftAt?: number;
  mid?: string;
}

export interface CallRecord {
  sessionId: string;
  mid: string;
  type: CallType;
  mode: CallMode;
  status: CallStatus;
  initiator: string;
  receiver: string;
  receiverType: ReceiverType;
  initiatedAt: number;
  startedAt?: number;
  endedAt?: number;
  hasRecording: boolean;
  totalAudioMinutes: number;
  totalVideoMinutes: number;
  totalDurationInMinutes: number;
  totalDuration: string;
  totalParticipants: number;
  participants: CallParticipant[];
}

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** A record after wire quirks: numbers may be strings, extra keys may appear, or (with
 * the invalidRecords quirk) it may not be a valid call at all. */
export type WireCall = JsonObject;

export interface ErrorBody {
  error: { code: string; message: string; devMessage: string };
}
