/**
 * The source text of each element of a top-level array member (`{"data": [ {...}, ... ]}`)
 * of a JSON document that has already been parsed successfully.
 *
 * Why: the sync keeps every call's raw record. Slicing the record out of the page as it
 * arrived is both cheaper than `JSON.stringify` of the parsed object (a structural scan,
 * no string building) and more faithful (the bytes the platform sent). The document is
 * valid JSON (the caller parsed it first), so the scan only tracks strings and nesting;
 * anything unexpected returns undefined and the caller falls back to `JSON.stringify`.
 */

const QUOTE = 34;
const BACKSLASH = 92;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
const COMMA = 44;
const COLON = 58;

/** Index just past the string that opens at `start` (text[start] is a quote). */
function skipString(text: string, start: number): number {
  let i = start + 1;
  for (;;) {
    const q = text.indexOf('"', i);
    if (q < 0) return -1;
    // A quote is escaped when an odd number of backslashes precede it.
    let b = q - 1;
    while (b > start && text.charCodeAt(b) === BACKSLASH) b--;
    if ((q - 1 - b) % 2 === 0) return q + 1;
    i = q + 1;
  }
}

const isSpace = (c: number) => c === 32 || c === 10 || c === 13 || c === 9;

/**
 * Element texts of the array held by `member` at the top level of the object in `text`,
 * or undefined when the document is not such an object or the member is not an array.
 */
export function arrayMemberElements(text: string, member: string): string[] | undefined {
  const n = text.length;
  let i = 0;
  while (i < n && isSpace(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) !== OPEN_BRACE) return undefined;
  i++;
  let found: string[] | undefined;
  // Walk every top-level member: key, colon, value. The whole object is walked so that a
  // repeated key (JSON.parse keeps the last one) makes the answer undefined, not wrong.
  for (;;) {
    while (i < n && (isSpace(text.charCodeAt(i)) || text.charCodeAt(i) === COMMA)) i++;
    if (i >= n) return undefined;
    if (text.charCodeAt(i) === CLOSE_BRACE) return found;
    if (text.charCodeAt(i) !== QUOTE) return undefined;
    const keyEnd = skipString(text, i);
    if (keyEnd < 0) return undefined;
    const key = text.slice(i + 1, keyEnd - 1);
    i = keyEnd;
    while (i < n && isSpace(text.charCodeAt(i))) i++;
    if (text.charCodeAt(i) !== COLON) return undefined;
    i++;
    while (i < n && isSpace(text.charCodeAt(i))) i++;
    // Keys with escapes are compared as written; "data" never needs one.
    if (key === member) {
      if (found || text.charCodeAt(i) !== OPEN_BRACKET) return undefined;
      found = elements(text, i);
      if (!found) return undefined;
    }
    i = skipValue(text, i);
    if (i < 0) return undefined;
  }
}

/** Index just past the value that starts at `start`. */
function skipValue(text: string, start: number): number {
  const n = text.length;
  let depth = 0;
  let i = start;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = skipString(text, i);
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

/** The element texts of the array whose `[` is at `open`. */
function elements(text: string, open: number): string[] | undefined {
  const n = text.length;
  const out: string[] = [];
  let i = open + 1;
  for (;;) {
    while (i < n && (isSpace(text.charCodeAt(i)) || text.charCodeAt(i) === COMMA)) i++;
    if (i >= n) return undefined;
    if (text.charCodeAt(i) === CLOSE_BRACKET) return out;
    const end = skipValue(text, i);
    if (end < 0 || end === i) return undefined;
    out.push(text.slice(i, end));
    i = end;
  }
}
