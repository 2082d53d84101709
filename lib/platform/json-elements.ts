/**
 * The source text of each element of a top-level array member (`{"data": [ {...}, ... ]}`)
 * of a JSON document that has already been parsed successfully.
 *
 * Why: the sync keeps every call's raw record. Slicing the record out of the page as it
 * arrived is both cheaper than `JSON.stringify` of the parsed object (a structural scan,
 * no string building) and more faithful (the bytes the platform sent). The document is
 * valid JSON (the caller parsed it first), so the scan only tracks strings and nesting;
 * anything unexpected returns undefined and the caller falls back to `JSON.stringify`.
 *
 * The scan runs over the UTF-8 bytes, read as latin1 (one character per byte, so
 * positions are byte offsets; String#indexOf finds closing quotes far faster than a
 * loop over a byte array): structural characters are ASCII and never occur inside a
 * multi-byte sequence. Each element is then decoded from its own bytes, a one-byte
 * string whenever it is ASCII. Sliced from the decoded page (a two-byte string as soon
 * as one uid on the page is not ASCII) every element would be two-byte: twice the bytes
 * to hash, to hand to the write worker and to bind.
 */

const QUOTE = 34;
const BACKSLASH = 92;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
const COMMA = 44;
const COLON = 58;

/** Index just past the string that opens at `start` (t[start] is a quote). */
function skipString(t: string, start: number): number {
  let i = start + 1;
  for (;;) {
    const q = t.indexOf('"', i);
    if (q < 0) return -1;
    // A quote is escaped when an odd number of backslashes precede it.
    let b = q - 1;
    while (b > start && t.charCodeAt(b) === BACKSLASH) b--;
    if ((q - 1 - b) % 2 === 0) return q + 1;
    i = q + 1;
  }
}

const isSpace = (c: number) => c === 32 || c === 10 || c === 13 || c === 9;

/**
 * Ranges [start, end, start, end, …] of the elements of the array held by `member` at
 * the top level of the object in `t`, or undefined when the document is not such an
 * object, the member is not an array, or the member appears twice.
 */
function memberElementRanges(t: string, member: string): number[] | undefined {
  const n = t.length;
  let i = 0;
  while (i < n && isSpace(t.charCodeAt(i))) i++;
  if (t.charCodeAt(i) !== OPEN_BRACE) return undefined;
  i++;
  let found: number[] | undefined;
  // Walk every top-level member: key, colon, value. The whole object is walked so that a
  // repeated key (JSON.parse keeps the last one) makes the answer undefined, not wrong.
  for (;;) {
    while (i < n && (isSpace(t.charCodeAt(i)) || t.charCodeAt(i) === COMMA)) i++;
    if (i >= n) return undefined;
    if (t.charCodeAt(i) === CLOSE_BRACE) return found;
    if (t.charCodeAt(i) !== QUOTE) return undefined;
    const keyEnd = skipString(t, i);
    if (keyEnd < 0) return undefined;
    // Keys with escapes are compared as written; "data" never needs one.
    const isMember = keyEnd - i - 2 === member.length && t.startsWith(member, i + 1);
    i = keyEnd;
    while (i < n && isSpace(t.charCodeAt(i))) i++;
    if (t.charCodeAt(i) !== COLON) return undefined;
    i++;
    while (i < n && isSpace(t.charCodeAt(i))) i++;
    if (isMember) {
      if (found || t.charCodeAt(i) !== OPEN_BRACKET) return undefined;
      found = elements(t, i);
      if (!found) return undefined;
    }
    i = skipValue(t, i);
    if (i < 0) return undefined;
  }
}

/** Index just past the value that starts at `start`. */
function skipValue(t: string, start: number): number {
  const n = t.length;
  let depth = 0;
  let i = start;
  while (i < n) {
    const c = t.charCodeAt(i);
    if (c === QUOTE) {
      i = skipString(t, i);
      if (i < 0) return -1;
      if (depth === 0) return i;
      continue;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (depth === 0) return i; // end of a scalar that ran up to the enclosing `}`
      depth--;
      if (depth === 0) return i + 1;
    } else if (depth === 0 && (c === COMMA || isSpace(c))) return i; // end of a scalar
    i++;
  }
  return depth === 0 ? i : -1;
}

/** The element ranges of the array whose `[` is at `open`. */
function elements(t: string, open: number): number[] | undefined {
  const n = t.length;
  const out: number[] = [];
  let i = open + 1;
  for (;;) {
    while (i < n && (isSpace(t.charCodeAt(i)) || t.charCodeAt(i) === COMMA)) i++;
    if (i >= n) return undefined;
    if (t.charCodeAt(i) === CLOSE_BRACKET) return out;
    const end = skipValue(t, i);
    if (end < 0 || end === i) return undefined;
    out.push(i, end);
    i = end;
  }
}

/**
 * The byte ranges [start, end, start, end, …] of the elements (see memberElementRanges)
 * in the UTF-8 document, or undefined.
 */
export function arrayMemberRanges(doc: Uint8Array, member: string): number[] | undefined {
  const b = Buffer.from(doc.buffer, doc.byteOffset, doc.byteLength);
  return memberElementRanges(b.toString("latin1"), member);
}

/** The element texts (see memberElementRanges), each decoded from its own bytes. */
export function arrayMemberElements(doc: string | Uint8Array, member: string): string[] | undefined {
  const b = typeof doc === "string" ? Buffer.from(doc, "utf8") : Buffer.from(doc.buffer, doc.byteOffset, doc.byteLength);
  const ranges = memberElementRanges(b.toString("latin1"), member);
  if (!ranges) return undefined;
  const out: string[] = new Array(ranges.length / 2);
  for (let k = 0; k < ranges.length; k += 2) out[k / 2] = b.toString("utf8", ranges[k], ranges[k + 1]);
  return out;
}
