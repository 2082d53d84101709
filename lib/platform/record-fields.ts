/**
 * The fields of a Calls API record that the sync types, as the byte reader
 * (page-reader.ts) fills them: the key tables it matches keys against, and one class of
 * fixed shape for a record's and for a participant's known fields (decision 0022).
 */

/** The fields the sync types (call-record.ts); anything else stays in the raw text. */
const CALL_KEYS = [
  "sessionId", "mid", "type", "mode", "status", "initiator", "receiver", "receiverType", "initiatedAt", "startedAt",
  "endedAt", "hasRecording", "totalAudioMinutes", "totalVideoMinutes", "totalDurationInMinutes", "totalDuration",
  "totalParticipants", "participants",
];
const PARTICIPANT_KEYS = ["uid", "state", "isJoined", "totalAudioMinutes", "totalVideoMinutes", "totalDuration", "deviceId", "joinedAt", "leftAt", "mid"];

/** Keys by byte length, as bytes, for matching a key in the page without making a string of it. */
export class KeyTable {
  private readonly byLength: Array<Array<{ index: number; bytes: Uint8Array }>> = [];
  constructor(readonly keys: string[]) {
    keys.forEach((key, index) => (this.byLength[key.length] ??= []).push({ index, bytes: Buffer.from(key, "latin1") }));
  }
  /** The index of the known key written as b[start, end) (ASCII, no escape), or -1. */
  match(b: Uint8Array, start: number, end: number): number {
    const candidates = this.byLength[end - start];
    if (!candidates) return -1;
    outer: for (const c of candidates) {
      const k = c.bytes;
      for (let j = 0; j < k.length; j++) if (b[start + j] !== k[j]) continue outer;
      return c.index;
    }
    return -1;
  }
  indexOf(key: string): number {
    return this.keys.indexOf(key);
  }
}

/**
 * A record's known fields. One shape for every record (fields never sent stay
 * undefined, which every reader of a parsed record takes as absent): the coercion reads
 * them by name, and reads of one shape are much cheaper than of objects built key by key.
 */
export class CallFields {
  sessionId: unknown = undefined;
  mid: unknown = undefined;
  type: unknown = undefined;
  mode: unknown = undefined;
  status: unknown = undefined;
  initiator: unknown = undefined;
  receiver: unknown = undefined;
  receiverType: unknown = undefined;
  initiatedAt: unknown = undefined;
  startedAt: unknown = undefined;
  endedAt: unknown = undefined;
  hasRecording: unknown = undefined;
  totalAudioMinutes: unknown = undefined;
  totalVideoMinutes: unknown = undefined;
  totalDurationInMinutes: unknown = undefined;
  totalDuration: unknown = undefined;
  totalParticipants: unknown = undefined;
  participants: unknown = undefined;

  /** Sets the field CALL_KEYS[k] (a switch: one shape, no keyed stores). */
  set(k: number, v: unknown): void {
    switch (k) {
      case 0: this.sessionId = v; break;
      case 1: this.mid = v; break;
      case 2: this.type = v; break;
      case 3: this.mode = v; break;
      case 4: this.status = v; break;
      case 5: this.initiator = v; break;
      case 6: this.receiver = v; break;
      case 7: this.receiverType = v; break;
      case 8: this.initiatedAt = v; break;
      case 9: this.startedAt = v; break;
      case 10: this.endedAt = v; break;
      case 11: this.hasRecording = v; break;
      case 12: this.totalAudioMinutes = v; break;
      case 13: this.totalVideoMinutes = v; break;
      case 14: this.totalDurationInMinutes = v; break;
      case 15: this.totalDuration = v; break;
      case 16: this.totalParticipants = v; break;
      case 17: this.participants = v; break;
    }
  }
}
/** CALL_KEYS' index of `participants`. */
export const PARTICIPANTS_KEY = 17;

/** A participant's known fields (see CallFields). */
export class ParticipantFields {
  uid: unknown = undefined;
  state: unknown = undefined;
  isJoined: unknown = undefined;
  totalAudioMinutes: unknown = undefined;
  totalVideoMinutes: unknown = undefined;
  totalDuration: unknown = undefined;
  deviceId: unknown = undefined;
  joinedAt: unknown = undefined;
  leftAt: unknown = undefined;
  mid: unknown = undefined;

  set(k: number, v: unknown): void {
    switch (k) {
      case 0: this.uid = v; break;
      case 1: this.state = v; break;
      case 2: this.isJoined = v; break;
      case 3: this.totalAudioMinutes = v; break;
      case 4: this.totalVideoMinutes = v; break;
      case 5: this.totalDuration = v; break;
      case 6: this.deviceId = v; break;
      case 7: this.joinedAt = v; break;
      case 8: this.leftAt = v; break;
      case 9: this.mid = v; break;
    }
  }
}

export const CALL_TABLE = new KeyTable(CALL_KEYS);
export const PARTICIPANT_TABLE = new KeyTable(PARTICIPANT_KEYS);
