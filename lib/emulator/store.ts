// One tenant app's calls: base records are rebuilt on demand from (seed, slot); only
// mutated or newly arrived records are held as objects (overrides).
import { CallColumns, BIT_GROUP, BIT_RECORDING, BIT_VIDEO } from "./columns";
import { buildCall, finishTotals, generateCallAt, inSeedOrder, makeContext, type GenContext } from "./generator";
import type { DataMixName } from "./mixes";
import { int, mix, mulberry32 } from "./prng";
import { INVALID_KINDS, serializeServed, toWire, type InvalidKind } from "./quirks";
import { decodeRandomSessionId, sameSecondOrderKey, type SessionIdOrder } from "./session-ids";
import { CALL_MODES, CALL_STATUSES, type CallMode, type CallRecord, type CallStatus, type CallType, type ReceiverType, type Region, type WireCall } from "./types";

export interface AppOptions {
  appId: string;
  apiKey: string;
  region: Region;
  seed: number;
  count: number;
  now: number;
  months: number;
  name?: string;
  maxMeetingSize?: number;
  mix?: DataMixName;
  sessionIds?: SessionIdOrder;
}

export interface CallFilters {
  type?: CallType;
  mode?: CallMode;
  participantsCount?: number;
  startedAt?: number;
  status?: CallStatus;
  receiverType?: ReceiverType;
  endedAt?: number;
  hasRecording?: boolean;
  uid?: string;
}

export interface AdvanceOptions {
  /** Seconds to move the app's clock forward (default 0). */
  seconds?: number;
  /** New calls arriving at the top, initiated within the advanced window. */
  newCalls?: number;
  /** End every ongoing call (default true when seconds > 0). */
  endOngoing?: boolean;
  /** Give this many of the newest ended calls without a recording a recording. */
  addRecordings?: number;
}

export interface AdvanceResult {
  now: number;
  ended: string[];
  added: string[];
  recorded: string[];
}

export class AppStore {
  readonly appId: string;
  readonly apiKey: string;
  readonly region: Region;
  readonly name: string;
  readonly createdAt: number;
  clock: number;
  private readonly ctx: GenContext;
  private readonly cols: CallColumns;
  private readonly overrides = new Map<number, CallRecord>();
  private n: number;
  /** Slots in ascending (initiatedAt, sessionId) order; the list serves it reversed. */
  private order: Uint32Array;
  private version = 0;
  private cache: { key: string; slots: Uint32Array } | undefined;
  /** Served text of every base record, rendered once (see prerender()). */
  private rendered: { chunks: Buffer[]; chunk: Uint16Array; start: Uint32Array; end: Uint32Array } | undefined;

  constructor(o: AppOptions) {
    this.appId = o.appId;
    this.apiKey = o.apiKey;
    this.region = o.region;
    this.name = o.name ?? o.appId;
    this.ctx = makeContext({ appId: o.appId, seed: o.seed, count: o.count, now: o.now, months: o.months, region: o.region, maxMeetingSize: o.maxMeetingSize, mix: o.mix, sessionIds: o.sessionIds });
    this.clock = this.ctx.now;
    this.createdAt = this.ctx.start;
    this.n = this.ctx.count;
    this.cols = new CallColumns(this.n);
    for (let s = 0; s < this.n; s++) this.cols.set(s, generateCallAt(this.ctx, s), this.ctx.pop.uidIndex);
    this.order = this.cols.sortedSlots(this.n);
  }

  hasUid(uid: string): boolean {
    return this.ctx.pop.uidIndex.has(uid);
  }

  /** Display name of a uid (webhook occupants carry names). */
  nameOf(uid: string): string {
    const i = this.ctx.pop.uidIndex.get(uid);
    return i === undefined ? uid : this.ctx.pop.names[i];
  }

  get size(): number {
    return this.n;
  }

  record(slot: number): CallRecord {
    return this.overrides.get(slot) ?? generateCallAt(this.ctx, slot);
  }

  /** Records chosen by the invalidRecords switch: a few fixed early slots plus a sparse
   * regular pattern, so apps of every size have some. */
  invalidKind(slot: number): InvalidKind | undefined {
    if (slot === 7) return "missingSessionId";
    if (slot === 23) return "typeObject";
    if (slot === 61) return "participantsString";
    return slot % 397 === 101 ? INVALID_KINDS[Math.floor(slot / 397) % 3] : undefined;
  }

  wire(slot: number, invalidRecords: boolean): WireCall {
    return toWire(this.record(slot), invalidRecords ? this.invalidKind(slot) : undefined, this.ctx.mix);
  }

  /** JSON text of wire(slot, invalidRecords), built without the intermediate object. */
  text(slot: number, invalidRecords: boolean): string {
    return serializeServed(this.record(slot), invalidRecords ? this.invalidKind(slot) : undefined, this.ctx.mix);
  }

  /**
   * Renders every base record's served text once, into a few large buffers. Benchmarks
   * use it: the platform's own CPU is not on the machine being measured, and serving a
   * stored text costs the emulator a copy instead of generating and printing the record.
   */
  prerender(): void {
    const CHUNK = 64 << 20;
    const chunks: Buffer[] = [];
    const chunk = new Uint16Array(this.n);
    const start = new Uint32Array(this.n);
    const end = new Uint32Array(this.n);
    let buf = Buffer.allocUnsafe(CHUNK);
    let used = 0;
    for (let s = 0; s < this.n; s++) {
      const text = serializeServed(generateCallAt(this.ctx, s), undefined, this.ctx.mix);
      if (used + text.length * 3 > buf.length) {
        chunks.push(buf.subarray(0, used));
        buf = Buffer.allocUnsafe(Math.max(CHUNK, text.length * 3));
        used = 0;
      }
      chunk[s] = chunks.length;
      start[s] = used;
      used += buf.write(text, used, "utf8");
      end[s] = used;
    }
    chunks.push(buf.subarray(0, used));
    this.rendered = { chunks, chunk, start, end };
  }

  /** The served bytes of a slot, when prerendered and unchanged since. */
  renderedText(slot: number, invalidRecords: boolean): Buffer | undefined {
    const r = this.rendered;
    if (!r || slot >= r.chunk.length || this.overrides.has(slot) || (invalidRecords && this.invalidKind(slot) !== undefined)) return undefined;
    return r.chunks[r.chunk[slot]].subarray(r.start[slot], r.end[slot]);
  }

  /** Slot at position p of the newest-first list of all calls. */
  slotAt(p: number): number {
    return this.order[this.n - 1 - p];
  }

  /** Matching slots newest first, or undefined for "all" (no filter: no copy needed). */
  query(f: CallFilters, onlyUid?: string): Uint32Array | undefined {
    const active = Object.values(f).some((v) => v !== undefined) || onlyUid !== undefined;
    if (!active) return undefined;
    const key = `${this.version}|${JSON.stringify(f)}|${onlyUid ?? ""}`;
    if (this.cache?.key === key) return this.cache.slots;
    const c = this.cols;
    const uids = [f.uid, onlyUid].filter((u): u is string => u !== undefined).map((u) => this.ctx.pop.uidIndex.get(u) ?? -1);
    const out = new Uint32Array(this.n);
    let k = 0;
    if (!uids.includes(-1)) {
      const mode = f.mode === undefined ? -1 : CALL_MODES.indexOf(f.mode);
      const status = f.status === undefined ? -1 : CALL_STATUSES.indexOf(f.status);
      for (let p = this.n - 1; p >= 0; p--) {
        const s = this.order[p];
        const b = c.bits[s];
        if (f.type !== undefined && (b & BIT_VIDEO) !== (f.type === "video" ? BIT_VIDEO : 0)) continue;
        if (mode >= 0 && ((b >> 1) & 3) !== mode) continue;
        if (f.receiverType !== undefined && (b & BIT_GROUP) !== (f.receiverType === "group" ? BIT_GROUP : 0)) continue;
        if (f.hasRecording !== undefined && (b & BIT_RECORDING) !== (f.hasRecording ? BIT_RECORDING : 0)) continue;
        if (status >= 0 && c.status[s] !== status) continue;
        if (f.participantsCount !== undefined && c.joined[s] !== f.participantsCount) continue;
        if (f.startedAt !== undefined && (c.startedAt[s] === 0 || c.startedAt[s] !== f.startedAt)) continue;
        if (f.endedAt !== undefined && (c.endedAt[s] === 0 || c.endedAt[s] !== f.endedAt)) continue;
        if (uids.length > 0 && !uids.every((u) => c.tookPart(s, u))) continue;
        out[k++] = s;
      }
    }
    const slots = out.slice(0, k);
    this.cache = { key, slots };
    return slots;
  }

  /** Finds a call by sessionId through the (initiatedAt, same-second order) key it encodes. */
  find(sessionId: string): number | undefined {
    const at = this.initiatedAtOf(sessionId);
    if (at === undefined) return undefined;
    const key = sameSecondOrderKey(sessionId);
    let lo = 0;
    let hi = this.n - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const d = this.cols.initiatedAt[this.order[mid]] - at || this.cols.tail[this.order[mid]] - key;
      if (d < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    // lo: the first slot at or above the key. Random ids of one second may share their
    // first 8 digits (rarely): every slot with the key is checked.
    for (let i = lo; i < this.n; i++) {
      const s = this.order[i];
      if (this.cols.initiatedAt[s] !== at || this.cols.tail[s] !== key) return undefined;
      if (this.record(s).sessionId === sessionId) return s;
    }
    return undefined;
  }

  /** The initiatedAt a sessionId of this app encodes (undefined: not one of this app's shapes). */
  private initiatedAtOf(sessionId: string): number | undefined {
    if (this.ctx.sessionIds === "random") return decodeRandomSessionId(this.ctx.appSeed, sessionId)?.initiatedAt;
    const tailText = sessionId.slice(sessionId.lastIndexOf(".") + 1);
    return /^\d+[0-9a-f]{8}$/.test(tailText) ? Number(tailText.slice(0, -8)) : undefined;
  }

  private put(slot: number, rec: CallRecord): void {
    this.overrides.set(slot, rec);
    this.cols.set(slot, rec, this.ctx.pop.uidIndex);
    this.version++;
  }

  private endCall(slot: number, endedAt: number, withRecording: boolean): CallRecord {
    const rec = structuredClone(this.record(slot));
    rec.status = "ended";
    rec.endedAt = Math.max(endedAt, (rec.startedAt ?? rec.initiatedAt) + 1);
    for (const p of rec.participants) {
      if (p.isJoined && p.leftAt === undefined) {
        p.leftAt = rec.endedAt;
        p.state = "ended";
      }
    }
    rec.hasRecording = withRecording;
    finishTotals(rec, rec.endedAt);
    const ordered = inSeedOrder(rec);
    this.put(slot, ordered);
    return ordered;
  }

  /** Sets hasRecording and/or ends an ongoing call. Returns the new record. */
  patch(sessionId: string, change: { hasRecording?: boolean; end?: boolean }): CallRecord | undefined {
    const slot = this.find(sessionId);
    if (slot === undefined) return undefined;
    if (change.end && this.record(slot).status === "ongoing") this.endCall(slot, this.clock, false);
    if (change.hasRecording !== undefined) {
      const rec = structuredClone(this.record(slot));
      rec.hasRecording = change.hasRecording;
      this.put(slot, rec);
    }
    return this.record(slot);
  }

  advance(o: AdvanceOptions): AdvanceResult {
    const prev = this.clock;
    const count = Math.max(0, Math.floor(o.newCalls ?? 0));
    // New calls need at least one second of their own so they sort above everything.
    const seconds = Math.max(count > 0 ? 1 : 0, Math.floor(o.seconds ?? 0));
    this.clock = prev + seconds;
    const rng = mulberry32(mix(this.ctx.appSeed, this.version, this.clock, 0xad7a));
    const result: AdvanceResult = { now: this.clock, ended: [], added: [], recorded: [] };
    if (o.endOngoing ?? seconds > 0) {
      const ongoing = CALL_STATUSES.indexOf("ongoing");
      for (let s = 0; s < this.n; s++) {
        if (this.cols.status[s] !== ongoing) continue;
        const endAt = this.clock - int(rng, 0, Math.floor(seconds / 2));
        result.ended.push(this.endCall(s, endAt, rng() < 0.3).sessionId);
      }
    }
    if (count > 0) {
      const times: number[] = [];
      for (let i = 0; i < count; i++) times.push(prev + 1 + Math.floor(rng() * Math.max(1, this.clock - prev)));
      times.sort((a, b) => a - b);
      const fresh: CallRecord[] = [];
      for (const at of times) {
        const seed = mix(this.ctx.appSeed, this.n + fresh.length, at);
        const st = rng();
        const status: CallStatus = st < 0.12 ? "unanswered" : st < 0.19 ? "rejected" : "ended";
        let rec = buildCall(mulberry32(seed), this.ctx, { initiatedAt: at, status, clockNow: this.clock, long: false });
        // A call that would end after the clock is still running: same call, ongoing.
        if ((rec.endedAt ?? 0) > this.clock) rec = buildCall(mulberry32(seed), this.ctx, { initiatedAt: at, status: "ongoing", clockNow: this.clock, long: false });
        fresh.push(rec);
      }
      fresh.sort((a, b) => a.initiatedAt - b.initiatedAt || (a.sessionId < b.sessionId ? -1 : 1));
      const order = new Uint32Array(this.n + fresh.length);
      order.set(this.order.subarray(0, this.n));
      for (const rec of fresh) {
        order[this.n] = this.n;
        this.put(this.n, rec);
        result.added.push(rec.sessionId);
        this.n++;
      }
      this.order = order;
    }
    let want = Math.max(0, Math.floor(o.addRecordings ?? 0));
    for (let p = 0; p < this.n && want > 0; p++) {
      const s = this.slotAt(p);
      const rec = this.record(s);
      if (rec.status !== "ended" || rec.hasRecording || rec.startedAt === undefined) continue;
      this.put(s, { ...rec, hasRecording: true });
      result.recorded.push(rec.sessionId);
      want--;
    }
    this.version++;
    return result;
  }
}
