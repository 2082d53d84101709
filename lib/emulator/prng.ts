// Small deterministic PRNG helpers. Everything the emulator generates derives from
// (seed, app, index) through these, so a record can be rebuilt on demand instead of
// being kept in memory (1M calls would not fit as objects).

export type Rng = () => number;

/** mulberry32: 32-bit state, good enough statistical quality for fake data, very fast. */
export function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Mixes several integers into one well-spread 32-bit seed (murmur3 finaliser). */
export function mix(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const p of parts) {
    h = Math.imul(h ^ (p >>> 0), 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
  }
  return h >>> 0;
}

/** FNV-1a of a string, used to fold app ids and uids into seeds. */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export function int(rng: Rng, min: number, maxInclusive: number): number {
  return min + Math.floor(rng() * (maxInclusive - min + 1));
}

export function pick<T>(rng: Rng, items: readonly T[]): T {
  return items[Math.floor(rng() * items.length)];
}

const BYTE_HEX: readonly string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** Lowercase hex from 32 random bits at a time (a lookup table: this is on the hot path
 * of serving a million records). */
export function hex(rng: Rng, length: number): string {
  let out = "";
  while (out.length < length) {
    const v = (rng() * 0x100000000) >>> 0;
    out += BYTE_HEX[v >>> 24] + BYTE_HEX[(v >>> 16) & 255] + BYTE_HEX[(v >>> 8) & 255] + BYTE_HEX[v & 255];
  }
  return out.length === length ? out : out.slice(0, length);
}

/** Log-normal sample around a median; call durations are heavy-tailed like this. */
export function logNormal(rng: Rng, median: number, sigma: number): number {
  // Box-Muller; 1 - rng() keeps log away from 0.
  const z = Math.sqrt(-2 * Math.log(1 - rng())) * Math.cos(2 * Math.PI * rng());
  return median * Math.exp(sigma * z);
}

function word(rng: Rng): number {
  return (rng() * 0x100000000) >>> 0;
}

/** Version-4-shaped UUID from four 32-bit draws (no slicing: built once per participant). */
export function uuidLike(rng: Rng): string {
  const [a, b, c, d] = [word(rng), word(rng), word(rng), word(rng)];
  const H = BYTE_HEX;
  const N = "0123456789abcdef";
  return `${H[a >>> 24]}${H[(a >>> 16) & 255]}${H[(a >>> 8) & 255]}${H[a & 255]}-${H[b >>> 24]}${H[(b >>> 16) & 255]}-4${N[(b >>> 8) & 15]}${H[b & 255]}-a${N[(c >>> 24) & 15]}${H[(c >>> 16) & 255]}-${H[c & 255]}${H[d >>> 24]}${H[(d >>> 16) & 255]}${H[(d >>> 8) & 255]}${H[d & 255]}${H[(c >>> 8) & 255]}`;
}

/** Deterministic Fisher-Yates on a copy. */
export function shuffled<T>(rng: Rng, items: readonly T[]): T[] {
  const out = items.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
