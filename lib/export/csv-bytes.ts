import { fixed3, rawCell, RAW_KIND } from "./csv";
import type { IsoBytes } from "./iso";

/**
 * CSV lines written straight into UTF-8 bytes, field by field, with `rawCell`'s exact
 * text: the calls CSV's hot loop (ten million rows), where building each line as a
 * string and encoding the batch made string allocation, UTF-8 encoding and the GC of
 * those strings about half of the export's CPU (docs/decisions/0021). Numbers are
 * written digit by digit; a string is copied char by char while it is plain ASCII that
 * needs neither quotes nor a formula guard, and otherwise written as `rawCell`'s text,
 * encoded — so the bytes are `rawCell`'s whatever the value.
 */

const COMMA = 44;
const CR = 13;
const LF = 10;
const QUOTE = 34;
const ZERO = 48;

/** Bytes a row may take beyond its strings' own (numbers, pieces, ISO times), with room to spare. */
const ROW_SLACK = 512;

const encoder = new TextEncoder();

/** A cell's text as UTF-8 bytes, for `piece`. */
export function utf8Bytes(text: string): Uint8Array {
  return encoder.encode(text);
}

/**
 * Spent batches' buffers, written again by the next batches. Every fresh batch buffer is
 * memory V8 counts as external to the heap, and on the server's main thread (a heap of
 * ~80 MB, Next's) each 64 MB of it that is not yet collected starts a full mark-compact:
 * about 5 of them, 0.5 µs a row, per million-row export (docs/decisions/0023). A batch is
 * reused only once its consumer says it is done with its bytes (`recycleCsvBatch`: the
 * lean API path, once the socket or gzip has taken them); any other consumer keeps them,
 * and they are collected as before.
 */
const spare: ArrayBuffer[] = [];
/** As many as an export has in flight (the lean path's 4 MB ahead, the worker's posted jobs, this thread's batch): ~9 MB kept after it (0029). */
const SPARE_MAX = 16;
/** Batches whose buffer is theirs alone (a view from byte 0), so recyclable. */
const batches = new WeakSet<Uint8Array>();

/** A spent buffer of at least `min` bytes, if one is kept (the pool's: no other holder). */
export function spareBuffer(min: number): ArrayBuffer | undefined {
  for (let i = spare.length - 1; i >= 0; i--) if (spare[i].byteLength >= min) return spare.splice(i, 1)[0];
  return undefined;
}

/** Marks bytes as a batch that owns its buffer (one that came from another thread, transferred): recyclable. */
export function ownBatch(chunk: Uint8Array): Uint8Array {
  if (chunk.byteOffset === 0 && chunk.buffer instanceof ArrayBuffer) batches.add(chunk);
  return chunk;
}

/**
 * The consumer of a batch is done with its bytes (written to the socket, taken by
 * gzip): its buffer may be written again. Anything not made by `CsvBytes` or `ownBatch`
 * (a header chunk, another report's bytes) is left alone.
 */
export function recycleCsvBatch(chunk: Uint8Array): void {
  if (!batches.delete(chunk)) return;
  const b = chunk.buffer;
  if (b instanceof ArrayBuffer && b.byteLength > 0 && spare.length < SPARE_MAX) spare.push(b);
}

/** Batch buffers are allocated in steps of this (a spare then fits the next batch of about the same size). */
const STEP = 64 * 1024;

export class CsvBytes {
  buf: Uint8Array;
  pos = 0;

  /** `given`: a spent buffer to write into (the worker gets one with its job), used if large enough. */
  constructor(capacity: number, given?: ArrayBuffer) {
    const need = Math.ceil(Math.max(1024, capacity) / STEP) * STEP;
    const b = given && given.byteLength >= need ? given : (spareBuffer(need) ?? new ArrayBuffer(need));
    this.buf = new Uint8Array(b);
  }

  /** Room for a row whose strings hold `chars` UTF-16 units (at most 3 bytes each, doubled by quoting). */
  reserve(chars: number): void {
    const need = this.pos + ROW_SLACK + chars * 6;
    if (need <= this.buf.length) return;
    const grown = new Uint8Array(Math.ceil(Math.max(need, this.buf.length * 2) / STEP) * STEP);
    grown.set(this.buf.subarray(0, this.pos));
    this.buf = grown;
  }

  /** The bytes written so far (a view on this writer's buffer), recyclable once sent (`recycleCsvBatch`). */
  bytes(): Uint8Array {
    return ownBatch(this.buf.subarray(0, this.pos));
  }

  comma(): void {
    this.buf[this.pos++] = COMMA;
  }

  crlf(): void {
    this.buf[this.pos++] = CR;
    this.buf[this.pos++] = LF;
  }

  /** Bytes written as they are (a cached cell, ASCII pieces). */
  piece(b: Uint8Array): void {
    const buf = this.buf;
    let p = this.pos;
    for (let i = 0; i < b.length; i++) buf[p++] = b[i];
    this.pos = p;
  }

  /** Any text, as UTF-8 (no quoting: the caller's text is already a cell). */
  utf8(text: string): void {
    this.reserve(text.length);
    this.pos += encoder.encodeInto(text, this.buf.subarray(this.pos)).written;
  }

  /** A whole number's digits (|n| < 2^53), as String(n) writes them. */
  private digits(n: number): void {
    const buf = this.buf;
    if (n < 0) {
      buf[this.pos++] = 45;
      n = -n;
    }
    let len = 1;
    for (let x = n; x >= 10; x = Math.floor(x / 10)) len++;
    let p = this.pos + len;
    this.pos = p;
    do {
      const q = Math.floor(n / 10);
      buf[--p] = ZERO + (n - q * 10);
      n = q;
    } while (n > 0);
  }

  /** `rawCell(v, plain)` of a number: String(v). */
  number(v: number): void {
    if (Number.isSafeInteger(v) && !Object.is(v, -0)) this.digits(v);
    else this.ascii(String(v));
  }

  /** `rawCell(v, decimal)` of a number: fixed3(v). */
  decimal(v: number): void {
    const m = Math.round(v * 1000);
    if (!Number.isSafeInteger(m) || Object.is(m, -0)) {
      this.ascii(fixed3(v));
      return;
    }
    const buf = this.buf;
    let a = m;
    if (a < 0) {
      buf[this.pos++] = 45;
      a = -a;
    }
    const int = Math.floor(a / 1000);
    const frac = a - int * 1000;
    this.digits(int);
    const p = this.pos;
    buf[p] = 46;
    buf[p + 1] = ZERO + Math.floor(frac / 100);
    buf[p + 2] = ZERO + (Math.floor(frac / 10) % 10);
    buf[p + 3] = ZERO + (frac % 10);
    this.pos = p + 4;
  }

  /** Text known to be ASCII (a number's String). */
  private ascii(s: string): void {
    const buf = this.buf;
    let p = this.pos;
    for (let i = 0; i < s.length; i++) buf[p++] = s.charCodeAt(i);
    this.pos = p;
  }

  /**
   * `rawCell(v, plain)` of a string: neutralised, quoted if it holds a quote, comma, CR
   * or LF. Plain ASCII with none of those and no formula start is copied as it is.
   */
  text(s: string): void {
    const n = s.length;
    if (n > 0) {
      const c0 = s.charCodeAt(0);
      // Formula starts (= + - @ tab CR): neutralise()'s; rawCell writes those.
      if (c0 === 61 || c0 === 43 || c0 === 45 || c0 === 64 || c0 === 9 || c0 === 13) return this.utf8(rawCell(s, RAW_KIND.plain));
    }
    const buf = this.buf;
    const start = this.pos;
    let p = start;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 128 || c === QUOTE || c === COMMA || c === CR || c === LF) {
        this.pos = start;
        return this.utf8(rawCell(s, RAW_KIND.plain));
      }
      buf[p++] = c;
    }
    this.pos = p;
  }

  /** `rawCell(v, kind)` of any value a SQLite column gives (null: nothing). */
  cell(v: unknown, kind: number): void {
    if (v === null || v === undefined) return;
    if (typeof v === "number") {
      if (kind === RAW_KIND.decimal) this.decimal(v);
      else if (kind === RAW_KIND.plain) this.number(v);
      else this.ascii(v ? "true" : "false");
    } else if (typeof v === "string") this.text(v);
    else this.utf8(rawCell(v, kind));
  }

  /** An ISO derived cell of a value (rawDerived's: nothing for null, undefined or ""). */
  iso(v: unknown, iso: IsoBytes): void {
    if (typeof v === "number") this.pos = iso.write(this.buf, this.pos, v);
    else if (v !== null && v !== undefined && v !== "") this.pos = iso.write(this.buf, this.pos, Number(v));
  }
}
