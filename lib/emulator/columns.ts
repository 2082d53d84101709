// Compact per-call columns (about 40 bytes a call) used for filtering and ordering, so
// that a million calls cost tens of megabytes instead of gigabytes of objects.
import { sameSecondOrderKey } from "./session-ids";
import { CALL_MODES, CALL_STATUSES, type CallRecord } from "./types";

function grown<T extends Uint32Array | Uint16Array | Uint8Array>(a: T, need: number, make: (n: number) => T): T {
  if (need <= a.length) return a;
  const b = make(Math.max(need, Math.ceil(a.length * 1.5) + 16));
  b.set(a);
  return b;
}

export const BIT_VIDEO = 1;
export const BIT_GROUP = 8;
export const BIT_RECORDING = 16;

export class CallColumns {
  initiatedAt = new Uint32Array(0);
  /** 0 = absent (never started / still ongoing). */
  startedAt = new Uint32Array(0);
  endedAt = new Uint32Array(0);
  /** The sessionId's order among calls of the same second (sameSecondOrderKey), to break initiatedAt ties. */
  tail = new Uint32Array(0);
  /** bit0 video, bits1-2 mode index, bit3 group receiver, bit4 hasRecording. */
  bits = new Uint8Array(0);
  status = new Uint8Array(0);
  joined = new Uint16Array(0);
  /** uid indices of everyone who took part, per slot: uids[uidStart[s] .. uidEnd[s]). */
  uidStart = new Uint32Array(0);
  uidEnd = new Uint32Array(0);
  uids = new Uint32Array(0);
  uidLen = 0;

  constructor(capacity: number) {
    this.ensure(capacity);
  }

  ensure(n: number): void {
    this.initiatedAt = grown(this.initiatedAt, n, (k) => new Uint32Array(k));
    this.startedAt = grown(this.startedAt, n, (k) => new Uint32Array(k));
    this.endedAt = grown(this.endedAt, n, (k) => new Uint32Array(k));
    this.tail = grown(this.tail, n, (k) => new Uint32Array(k));
    this.bits = grown(this.bits, n, (k) => new Uint8Array(k));
    this.status = grown(this.status, n, (k) => new Uint8Array(k));
    this.joined = grown(this.joined, n, (k) => new Uint16Array(k));
    this.uidStart = grown(this.uidStart, n, (k) => new Uint32Array(k));
    this.uidEnd = grown(this.uidEnd, n, (k) => new Uint32Array(k));
  }

  set(slot: number, rec: CallRecord, uidIndex: Map<string, number>): void {
    this.ensure(slot + 1);
    this.initiatedAt[slot] = rec.initiatedAt;
    this.startedAt[slot] = rec.startedAt ?? 0;
    this.endedAt[slot] = rec.endedAt ?? 0;
    this.tail[slot] = sameSecondOrderKey(rec.sessionId);
    this.bits[slot] =
      (rec.type === "video" ? BIT_VIDEO : 0) |
      (CALL_MODES.indexOf(rec.mode) << 1) |
      (rec.receiverType === "group" ? BIT_GROUP : 0) |
      (rec.hasRecording ? BIT_RECORDING : 0);
    this.status[slot] = CALL_STATUSES.indexOf(rec.status);
    this.joined[slot] = rec.totalParticipants;
    const ids = new Set<number>();
    const add = (u: string) => {
      const i = uidIndex.get(u);
      if (i !== undefined) ids.add(i);
    };
    add(rec.initiator);
    if (rec.receiverType === "user") add(rec.receiver);
    for (const p of rec.participants) add(p.uid);
    // Rewrites append; the few stale entries of a mutated record are simply orphaned.
    this.uids = grown(this.uids, this.uidLen + ids.size, (k) => new Uint32Array(k));
    this.uidStart[slot] = this.uidLen;
    for (const i of ids) this.uids[this.uidLen++] = i;
    this.uidEnd[slot] = this.uidLen;
  }

  tookPart(slot: number, uid: number): boolean {
    for (let i = this.uidStart[slot], end = this.uidEnd[slot]; i < end; i++) if (this.uids[i] === uid) return true;
    return false;
  }

  /** Ascending (initiatedAt, tail) order of slots 0..n-1. */
  sortedSlots(n: number): Uint32Array {
    // Pack both keys into one float64 per slot so a typed-array sort does the work:
    // initiatedAt * 2^21 + tail's top 21 bits is exact below 2^53.
    const keys = new Float64Array(n);
    for (let s = 0; s < n; s++) keys[s] = this.initiatedAt[s] * 2097152 + (this.tail[s] >>> 11);
    const order = new Uint32Array(n);
    for (let s = 0; s < n; s++) order[s] = s;
    const cmp = (a: number, b: number) => keys[a] - keys[b] || this.tail[a] - this.tail[b];
    return order.sort(cmp);
  }
}
