/**
 * How deeply a JSON text nests, measured on its bytes before anything parses it.
 *
 * A body such as `{"data":{"x":[[[[…5,000 deep…]]]]}}` once overflowed the stack of the
 * idempotency key's canonical JSON and answered 500, which the platform retries
 * forever. Real deliveries nest a handful of levels; anything past MAX_JSON_DEPTH is
 * refused with a 422 before it is parsed. The scan is one loop over the bytes (no
 * recursion, no allocation): brackets inside strings do not count, and UTF-8
 * continuation bytes (>= 0x80) can never be mistaken for the ASCII ones it looks for.
 */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/** True when objects and arrays in `bytes` nest deeper than `limit` levels (`{}` is one). */
export function jsonNestsDeeperThan(bytes: Uint8Array, limit = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (inString) {
      if (b === BACKSLASH) i++; // the escaped character, whatever it is
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) {
      inString = true;
    } else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}
