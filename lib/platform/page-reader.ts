import { isUtf8 } from "node:buffer";
import { CALL_TABLE, CallFields, PARTICIPANT_TABLE, PARTICIPANTS_KEY, ParticipantFields, type KeyTable } from "./record-fields";

export { CallFields, ParticipantFields } from "./record-fields";

/**
 * A list page of the Calls API read straight from its bytes: the records' ranges in the
 * page, and of each record only what the sync types (decision 0022).
 *
 * Why: JSON.parse of a page made a JS object of every value of every record (most of
 * them never read: the raw record is stored from the page's bytes), a second scan found
 * each record's range, and a record with any byte outside ASCII was parsed again from
 * UTF-8 (four in ten on the heavy-users mix). This reader does all three in one pass
 * over the bytes and builds, per record, an object of its known fields only.
 *
 * What it gives must be what JSON.parse gives, so it is strict and bails out:
 * - the whole page (`undefined`: the caller parses it as before) on anything that is not
 *   plain valid JSON of the expected shape: a syntax error, a control character in a
 *   string, a top-level key with an escape, `data` or `meta` twice or missing, more than
 *   the caller's limit of records, nesting deeper than MAX_DEPTH;
 * - one record (`records[i]` is then JSON.parse of its own UTF-8 text, exactly as the
 *   page path reads a record with non-ASCII bytes) when it is not an object, holds
 *   invalid UTF-8, has a known field whose value is an object or array (never a valid
 *   record), or a participant that is not an object.
 *
 * Values are exact: an ASCII string without escapes is a latin1 slice, one with other
 * bytes a UTF-8 slice of a record that is valid UTF-8 (quotes are ASCII, so a string's
 * bytes decode alone as they do inside the record), one with escapes goes through
 * JSON.parse; numbers of up to 15 digits are read digit by digit (exact below 2^53),
 * others through Number(), which rounds like JSON.parse. A key written twice keeps its
 * last value, as in JSON.parse. *
 * One file, though long (issue 28 looked at splitting it): it holds one idea, a single
 * pass over a page's bytes. The Reader's methods call each other on one cursor and share
 * the bail-out rules above, and its loops compare bytes with this module's own constants
 * (imported ones measured slower); the key tables it fills are record-fields.ts's.
 */

// The module's own constants (as in json-elements.ts), not imported ones: the loops below
// compare every byte with them, and imported bindings measured slower there.
const QUOTE = 34;
const BACKSLASH = 92;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
const COMMA = 44;
const COLON = 58;
const MINUS = 45;
const DOT = 46;

/**
 * Buffer's own slice decoders (what `toString(encoding, start, end)` calls after checking
 * its arguments): this reader calls them about 30 times a record, with bounds it has
 * just scanned.
 */
type Page = Buffer & { latin1Slice(start: number, end: number): string; utf8Slice(start: number, end: number): string };

/** Deeper values than this send the page to JSON.parse (its own limits decide). */
const MAX_DEPTH = 64;


/**
 * Strings that repeat from record to record (type, mode, status, uids…), by a hash of
 * their bytes: a direct-mapped table, so a repeat costs a hash and a compare instead of a
 * new string (about a third of the reader's time went on making strings). A slot holds
 * the last string hashed there; it is always compared in full before it is used.
 */
const INTERNED_SLOTS = 4096;
const MAX_INTERNED_LENGTH = 40;
const INTERNED: string[] = new Array<string>(INTERNED_SLOTS).fill("");

/** Thrown inside the reader: the page goes to JSON.parse. */
class BailPage extends Error {}
const BAIL = new BailPage("page not read by bytes");
/** Returned by a value read where only a scalar may stand. */
const NOT_SCALAR = Symbol("not a scalar");

export interface ReadPage {
  /**
   * Per record: an object of its known fields (and `participants`, each an object of its
   * known fields) with the values JSON.parse gives them, or, for a record read whole,
   * JSON.parse of its text.
   */
  records: unknown[];
  /**
   * Per record read by fields: per participant, its unknown keys as JSON (null: none),
   * as `extraParticipantJson` makes them from the parsed participant; undefined for a
   * record read whole (its participants carry their unknown keys).
   */
  extras: Array<Array<string | null> | undefined>;
  /** [start, end) of each record's text in the page. */
  ranges: number[];
  /** The top-level `meta` member as JSON.parse gives it (undefined when absent). */
  meta: unknown;
}

class Reader {
  i = 0;
  /** Set by `string()`: the string had an escape / a byte outside ASCII. */
  escaped = false;
  high = false;
  /** Some string since the last reset held a byte outside ASCII. */
  anyHigh = false;
  /** Set by `key()`: an unknown key's text (when asked for). */
  keyText = "";
  /**
   * Set by `participant()` / `participants()`: the unknown keys of the participant / of
   * each participant of the list just read (fields instead of a result object each: a
   * heavy page has thousands of participants).
   */
  participantExtra: string | null = null;
  participantExtras: Array<string | null> = [];

  constructor(private readonly b: Page) {}

  ws(): void {
    const b = this.b;
    let i = this.i;
    for (;;) {
      const c = b[i];
      if (c === 32 || c === 10 || c === 13 || c === 9) i++;
      else break;
    }
    this.i = i;
  }

  expect(c: number): void {
    this.ws();
    if (this.b[this.i] !== c) throw BAIL;
    this.i++;
  }

  /** Skips the string whose opening quote is at i; returns the index of its closing quote. */
  string(): number {
    const b = this.b;
    const n = b.length;
    let i = this.i + 1;
    let escaped = false;
    let high = false;
    for (;;) {
      if (i >= n) throw BAIL;
      const c = b[i];
      if (c === QUOTE) break;
      if (c === BACKSLASH) {
        escaped = true;
        const e = b[i + 1];
        if (e === 117) {
          // \uXXXX
          for (let k = 2; k < 6; k++) if (!isHex(b[i + k])) throw BAIL;
          i += 6;
        } else if (e === QUOTE || e === BACKSLASH || e === 47 || e === 98 || e === 102 || e === 110 || e === 114 || e === 116) {
          i += 2;
        } else throw BAIL;
        continue;
      }
      if (c < 32) throw BAIL; // a raw control character: not JSON
      if (c >= 128) high = true;
      i++;
    }
    this.escaped = escaped;
    this.high = high;
    if (high) this.anyHigh = true;
    this.i = i + 1;
    return i;
  }

  /** The string's value, for the string from the quote at `open` to the quote at `close`. */
  stringValue(open: number, close: number): string {
    if (this.escaped) return JSON.parse(this.b.utf8Slice(open, close + 1)) as string;
    return this.high ? this.b.utf8Slice(open + 1, close) : this.b.latin1Slice(open + 1, close);
  }

  /**
   * A number at i (strict JSON syntax) and its value. With up to 15 digits, k of them
   * after the point, the value is digits / 10^k: both are exact doubles, and one IEEE
   * division rounds once, so it is the correctly rounded value, as JSON.parse's is
   * (Clinger's fast path). Anything else (an exponent, more digits) goes to Number().
   */
  number(): number {
    const b = this.b;
    const start = this.i;
    let i = start;
    const neg = b[i] === MINUS;
    if (neg) i++;
    let v = 0;
    const intStart = i;
    if (b[i] === 48) i++;
    else if (b[i] >= 49 && b[i] <= 57) {
      while (b[i] >= 48 && b[i] <= 57) v = v * 10 + (b[i++] - 48);
    } else throw BAIL;
    let digits = i - intStart;
    let fraction = 0;
    if (b[i] === DOT) {
      i++;
      if (!(b[i] >= 48 && b[i] <= 57)) throw BAIL;
      const fracStart = i;
      while (b[i] >= 48 && b[i] <= 57) v = v * 10 + (b[i++] - 48);
      fraction = i - fracStart;
      digits += fraction;
    }
    let plain = digits <= 15;
    if (b[i] === 101 || b[i] === 69) {
      plain = false;
      i++;
      if (b[i] === 43 || b[i] === MINUS) i++;
      if (!(b[i] >= 48 && b[i] <= 57)) throw BAIL;
      while (b[i] >= 48 && b[i] <= 57) i++;
    }
    this.i = i;
    if (plain) {
      const x = fraction === 0 ? v : v / POW10[fraction];
      return neg ? -x : x;
    }
    return Number(this.b.latin1Slice(start, i));
  }

  literal(word: Uint8Array): void {
    const b = this.b;
    for (let k = 0; k < word.length; k++) if (b[this.i + k] !== word[k]) throw BAIL;
    this.i += word.length;
  }

  /**
   * A scalar value at i (after whitespace), or NOT_SCALAR with i left at its `{` or `[`.
   * `intern`: a field whose values repeat (labels, uids): its short strings come from
   * INTERNED when they are there.
   */
  scalar(intern = false): unknown {
    this.ws();
    const c = this.b[this.i];
    if (c === QUOTE) {
      const open = this.i;
      const close = this.string();
      if (intern && !this.escaped && !this.high && close - open <= MAX_INTERNED_LENGTH) return this.interned(open + 1, close);
      return this.stringValue(open, close);
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) return NOT_SCALAR;
    if (c === 116) return this.literal(TRUE), true;
    if (c === 102) return this.literal(FALSE), false;
    if (c === 110) return this.literal(NULL), null;
    return this.number();
  }

  /** The ASCII string b[start, end): the same string as last time when it is in INTERNED. */
  private interned(start: number, end: number): string {
    const b = this.b;
    let h = end - start;
    for (let j = start; j < end; j++) h = (Math.imul(h, 31) + b[j]) | 0;
    const slot = (h ^ (h >>> 13)) & (INTERNED_SLOTS - 1);
    const known = INTERNED[slot];
    if (known.length === end - start) {
      let same = true;
      for (let j = 0; j < known.length; j++) {
        if (known.charCodeAt(j) !== b[start + j]) {
          same = false;
          break;
        }
      }
      if (same) return known;
    }
    const fresh = b.latin1Slice(start, end);
    INTERNED[slot] = fresh;
    return fresh;
  }

  /** Skips any value at i (after whitespace), checking its syntax. */
  skip(depth: number): void {
    this.ws();
    const b = this.b;
    const c = b[this.i];
    if (c === OPEN_BRACE) {
      if (depth >= MAX_DEPTH) throw BAIL;
      this.i++;
      this.ws();
      if (b[this.i] === CLOSE_BRACE) return void this.i++;
      for (;;) {
        this.ws();
        if (b[this.i] !== QUOTE) throw BAIL;
        this.string();
        this.expect(COLON);
        this.skip(depth + 1);
        this.ws();
        const d = b[this.i++];
        if (d === CLOSE_BRACE) return;
        if (d !== COMMA) throw BAIL;
      }
    }
    if (c === OPEN_BRACKET) {
      if (depth >= MAX_DEPTH) throw BAIL;
      this.i++;
      this.ws();
      if (b[this.i] === CLOSE_BRACKET) return void this.i++;
      for (;;) {
        this.skip(depth + 1);
        this.ws();
        const d = b[this.i++];
        if (d === CLOSE_BRACKET) return;
        if (d !== COMMA) throw BAIL;
      }
    }
    // A scalar: checked, but no value made of it.
    if (c === QUOTE) this.string();
    else if (c === 116) this.literal(TRUE);
    else if (c === 102) this.literal(FALSE);
    else if (c === 110) this.literal(NULL);
    else this.number();
  }

  /**
   * A key at i (after whitespace) through its colon: the index of the known key it
   * names, or -1, with the key's text (decoded) in `keyText` when `wantText`.
   */
  key(table: KeyTable, wantText: boolean): number {
    this.ws();
    if (this.b[this.i] !== QUOTE) throw BAIL;
    const open = this.i;
    const close = this.string();
    let known: number;
    if (!this.escaped && !this.high) {
      known = table.match(this.b, open + 1, close);
      if (known < 0 && wantText) this.keyText = this.b.latin1Slice(open + 1, close);
    } else {
      // Written with escapes or other bytes: decoded first ("\u0075id" is "uid").
      const text = this.stringValue(open, close);
      known = table.indexOf(text);
      this.keyText = text;
    }
    this.expect(COLON);
    return known;
  }

  /**
   * The record whose `{` is at i: its known fields, or undefined (i is then anywhere
   * inside it) when it must be read whole.
   */
  record(extrasOut: { extras: Array<string | null> }): CallFields | undefined {
    const b = this.b;
    this.i++;
    const out = new CallFields();
    let extras: Array<string | null> = [];
    this.ws();
    if (b[this.i] === CLOSE_BRACE) {
      this.i++;
      extrasOut.extras = extras;
      return out;
    }
    for (;;) {
      const known = this.key(CALL_TABLE, false);
      if (known === PARTICIPANTS_KEY) {
        this.ws();
        if (b[this.i] === OPEN_BRACKET) {
          const parts = this.participants();
          if (!parts) return undefined;
          out.participants = parts;
          extras = this.participantExtras;
        } else {
          const v = this.scalar();
          if (v === NOT_SCALAR) return undefined;
          out.participants = v;
          extras = [];
        }
      } else if (known >= 0) {
        // type, mode, status, initiator, receiver, receiverType: values that repeat.
        const v = this.scalar(known >= 2 && known <= 7);
        if (v === NOT_SCALAR) return undefined; // an object or array where a scalar belongs: read whole
        out.set(known, v);
      } else this.skip(1);
      this.ws();
      const d = b[this.i++];
      if (d === CLOSE_BRACE) break;
      if (d !== COMMA) throw BAIL;
    }
    extrasOut.extras = extras;
    return out;
  }

  /** The participants array whose `[` is at i; their unknown keys in `participantExtras`. */
  private participants(): ParticipantFields[] | undefined {
    const b = this.b;
    this.i++;
    const parts: ParticipantFields[] = [];
    const extras: Array<string | null> = [];
    this.participantExtras = extras;
    this.ws();
    if (b[this.i] === CLOSE_BRACKET) {
      this.i++;
      return parts;
    }
    for (;;) {
      this.ws();
      if (b[this.i] !== OPEN_BRACE) return undefined; // not an object: the record is read whole
      const p = this.participant();
      if (!p) return undefined;
      parts.push(p);
      extras.push(this.participantExtra);
      this.ws();
      const d = b[this.i++];
      if (d === CLOSE_BRACKET) return parts;
      if (d !== COMMA) throw BAIL;
    }
  }

  /** The participant whose `{` is at i: its known fields, and its unknown keys as JSON in `participantExtra`. */
  private participant(): ParticipantFields | undefined {
    const b = this.b;
    this.i++;
    const fields = new ParticipantFields();
    // Built as extraParticipantJson builds it from a parsed participant: same keys, same
    // assignments, so the same order and the same last-value-wins.
    let extra: Record<string, unknown> | null = null;
    this.ws();
    if (b[this.i] === CLOSE_BRACE) {
      this.i++;
      this.participantExtra = null;
      return fields;
    }
    for (;;) {
      const known = this.key(PARTICIPANT_TABLE, true);
      if (known >= 0) {
        const v = this.scalar(known <= 1); // uid, state: values that repeat
        if (v === NOT_SCALAR) return undefined;
        fields.set(known, v);
      } else {
        const text = this.keyText;
        this.ws();
        const start = this.i;
        this.skip(2);
        extra ??= {};
        extra[text] = JSON.parse(this.b.utf8Slice(start, this.i));
      }
      this.ws();
      const d = b[this.i++];
      if (d === CLOSE_BRACE) break;
      if (d !== COMMA) throw BAIL;
    }
    this.participantExtra = extra ? JSON.stringify(extra) : null;
    return fields;
  }
}

/** 10^0 … 10^15: exact doubles (a plain number has at most 15 digits, so at most 15 after the point). */
const POW10 = Array.from({ length: 16 }, (_, k) => 10 ** k);

const TRUE = Buffer.from("true");
const FALSE = Buffer.from("false");
const NULL = Buffer.from("null");

function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
}

/**
 * Reads a page `{"data": [records…], "meta": {…}, …}`, or undefined when it must be parsed
 * by JSON.parse (see the module's comment). `maxRecords`: a longer `data` is left to the
 * caller's JSON path, which refuses it with its own message.
 */
export function readCallsPage(bytes: Buffer, maxRecords: number): ReadPage | undefined {
  const b = bytes as Page;
  const r = new Reader(b);
  let page: ReadPage | undefined;
  let metaRange: [number, number] | undefined;
  try {
    r.ws();
    if (b[r.i] !== OPEN_BRACE) return undefined;
    r.i++;
    r.ws();
    if (b[r.i] === CLOSE_BRACE) return undefined;
    for (;;) {
      r.ws();
      if (b[r.i] !== QUOTE) return undefined;
      const open = r.i;
      const close = r.string();
      if (r.escaped || r.high) return undefined;
      const name = b.latin1Slice(open + 1, close);
      r.expect(COLON);
      r.ws();
      if (name === "data") {
        if (page || b[r.i] !== OPEN_BRACKET) return undefined;
        page = readRecords(r, b, maxRecords);
        if (!page) return undefined;
      } else if (name === "meta") {
        if (metaRange) return undefined;
        const start = r.i;
        r.skip(1);
        metaRange = [start, r.i];
      } else r.skip(1);
      r.ws();
      const d = b[r.i++];
      if (d === CLOSE_BRACE) break;
      if (d !== COMMA) return undefined;
    }
    r.ws();
    if (r.i !== b.length || !page) return undefined;
  } catch (err) {
    if (err instanceof BailPage) return undefined;
    throw err;
  }
  if (metaRange) page.meta = JSON.parse(b.utf8Slice(metaRange[0], metaRange[1]));
  return page;
}

/** The `data` array whose `[` is at r.i. */
function readRecords(r: Reader, b: Page, maxRecords: number): ReadPage | undefined {
  const records: unknown[] = [];
  const extras: Array<Array<string | null> | undefined> = [];
  const ranges: number[] = [];
  const extrasOut = { extras: [] as Array<string | null> };
  r.i++;
  r.ws();
  if (b[r.i] === CLOSE_BRACKET) {
    r.i++;
    return { records, extras, ranges, meta: undefined };
  }
  for (;;) {
    if (records.length === maxRecords) return undefined;
    r.ws();
    const start = r.i;
    let fields: CallFields | undefined;
    r.anyHigh = false;
    if (b[start] === OPEN_BRACE) fields = r.record(extrasOut);
    let end: number;
    if (fields !== undefined) {
      end = r.i;
      // Strings were decoded from UTF-8 slices: exact only when the record is valid UTF-8
      // (a byte outside ASCII can only stand inside a string of valid JSON).
      if (r.anyHigh && !isUtf8(b.subarray(start, end))) fields = undefined;
    } else {
      r.i = start;
      r.skip(1);
      end = r.i;
    }
    ranges.push(start, end);
    if (fields !== undefined) {
      records.push(fields);
      extras.push(extrasOut.extras);
    } else {
      // Read whole, as the page path reads a record with bytes outside ASCII.
      records.push(JSON.parse(b.utf8Slice(start, end)));
      extras.push(undefined);
    }
    r.ws();
    const d = b[r.i++];
    if (d === CLOSE_BRACKET) return { records, extras, ranges, meta: undefined };
    if (d !== COMMA) throw BAIL;
  }
}
