/**
 * The platform's record of a call as the call detail shows it ("Raw record (for
 * support)", GET /api/v1/calls/{id}). The record is stored as the upstream sent it, and
 * an upstream may nest an unknown field thousands of levels deep: JSON.stringify (the
 * API's answer, the page's pretty-print, React's serialisation) recurses and overflows
 * the stack on such a value. So the depth is measured on the text first, without
 * recursion, and a record nested deeper than any real one is shown as its text.
 */

/** Deeper than any record the platform documents (its deepest field is participants[i].x: 3). */
export const MAX_RAW_DEPTH = 64;
/** How much of an over-deep record's text is kept for support. */
const TEXT_KEPT = 4_096;

export type RawRecord = Record<string, unknown>;

/** The deepest nesting of objects and arrays in a JSON text (strings skipped); iterative. */
export function jsonDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > deepest) deepest = depth;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
  }
  return deepest;
}

/**
 * The stored record as an object, or null when there is none (or it is not a JSON
 * object). One nested deeper than MAX_RAW_DEPTH comes back as a note and the start of
 * its text, which every serialiser can handle.
 */
export function parseRawRecord(text: string | null): RawRecord | null {
  if (text === null) return null;
  if (jsonDepth(text) > MAX_RAW_DEPTH) {
    return {
      note: `The platform's record nests deeper than ${MAX_RAW_DEPTH} levels; its first ${TEXT_KEPT.toLocaleString("en")} characters are shown as text.`,
      text: text.slice(0, TEXT_KEPT),
    };
  }
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === "object" && !Array.isArray(value) ? (value as RawRecord) : null;
  } catch {
    return null;
  }
}
