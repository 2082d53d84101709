/**
 * The coercers of a Calls API record's fields: each takes a value as the platform sends
 * it ("typed as observed": decimals as strings, `HH:MM:SS` durations, ...) and gives the
 * typed value or a `Bad` with the reason. call-record.ts builds the record's schemas and
 * its fast path from them; the sync's write row (lib/sync/write-row.ts) applies the very
 * same ones, through call-record.ts's exports.
 */

export const describe = (v: unknown): string => {
  if (typeof v === "string") return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (v === null || typeof v !== "object") return String(v);
  return Array.isArray(v) ? "an array" : "an object";
};

const isAbsent = (v: unknown) => v === undefined || v === null || (typeof v === "string" && v.trim() === "");

function toNumber(v: unknown): number | undefined {
  if (typeof v === "number") return Number.isFinite(v) ? v : undefined;
  if (typeof v === "string") {
    const n = Number(v.trim());
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

/**
 * Each field is one coercer: it returns the value or a `Bad` with the message. In the zod
 * schemas each becomes one `z.transform` ("accept anything, coerce, or report").
 */
export class Bad {
  constructor(readonly message: string) {}
}

/** A decimal that may arrive as a string; absent → null. */
export function toNum(v: unknown): number | null | Bad {
  if (isAbsent(v)) return null;
  const n = toNumber(v);
  return n === undefined ? new Bad(`expected a number, got ${describe(v)}`) : n;
}

/**
 * The most minutes one field of one record may hold: 100 million (about 190 years, far
 * beyond any call or any meeting's participant-minutes). Past it, or below zero, or not
 * finite, the value is impossible: the record is refused (the sync run lists it among its
 * skipped records with this reason), because a negative amount would cancel real minutes
 * in every sum and statement, and a huge one would swamp every total and chart.
 */
export const MAX_MINUTES = 100_000_000;

const outOfRange = (v: unknown) => new Bad(`expected minutes from 0 to ${MAX_MINUTES.toLocaleString("en-US")}, got ${describe(v)}`);

/** Decimal minutes (audio, video, total) that may arrive as a string; absent → null; impossible → Bad. */
export function toMinuteAmount(v: unknown): number | null | Bad {
  const n = toNum(v);
  if (typeof n !== "number") return n;
  return n >= 0 && n <= MAX_MINUTES ? n : outOfRange(v);
}

/** An integer that may arrive as a string or a decimal ("1700000000", 1700000000.0). */
export function toInt(v: unknown): number | null | Bad {
  const n = toNum(v);
  return typeof n === "number" ? Math.trunc(n) : n;
}

/** Epoch seconds; 0 and negatives mean "not set" (never a real call time). */
export function toEpoch(v: unknown): number | null | Bad {
  const n = toInt(v);
  return typeof n === "number" && n <= 0 ? null : n;
}

export function toBool(v: unknown): boolean | null | Bad {
  if (v === undefined || v === null || v === "") return null;
  if (v === true || v === 1) return true;
  if (v === false || v === 0) return false;
  if (typeof v === "string") {
    const s = v.trim().toLowerCase();
    if (s === "true" || s === "1" || s === "yes") return true;
    if (s === "false" || s === "0" || s === "no") return false;
  }
  return new Bad(`expected a boolean, got ${describe(v)}`);
}

/** A string; numbers are accepted and turned into strings (deviceId, ids). */
export function toStr(v: unknown): string | null | Bad {
  if (v === undefined || v === null) return null;
  if (typeof v === "string") return v;
  if (typeof v === "number" && Number.isFinite(v)) return String(v);
  return new Bad(`expected a string, got ${describe(v)}`);
}

/** Enum-like values (type, mode, status, state): kept as sent, trimmed, so new values survive. */
export function toLabel(v: unknown): string | null | Bad {
  const s = toStr(v);
  if (typeof s !== "string") return s;
  const t = s.trim();
  return t === "" ? null : t;
}

export function toId(v: unknown): string | Bad {
  const s = toStr(v);
  if (s instanceof Bad) return s;
  const t = s?.trim();
  if (!t) return new Bad(s === null ? "missing" : "empty");
  return t;
}

const digitAt = (s: string, i: number) => {
  const d = s.charCodeAt(i) - 48;
  return d >= 0 && d <= 9 ? d : -1;
};

/**
 * The platform's own form, `H:MM:SS` with 1–9 digits of hours and nothing else, read
 * digit by digit: a backfill reads a million of them, and the general reading below
 * (split, a pattern per part) cost about 2 µs each. undefined for any other form, which
 * the general reading then decides; a test checks both agree on every form.
 */
export function plainHms(s: string): number | undefined {
  const n = s.length;
  if (n < 7 || n > 15 || s.charCodeAt(n - 3) !== 58 || s.charCodeAt(n - 6) !== 58) return undefined;
  let hours = 0;
  for (let i = 0; i < n - 6; i++) {
    const d = digitAt(s, i);
    if (d < 0) return undefined;
    hours = hours * 10 + d;
  }
  const m1 = digitAt(s, n - 5), m2 = digitAt(s, n - 4), s1 = digitAt(s, n - 2), s2 = digitAt(s, n - 1);
  if (m1 < 0 || m2 < 0 || s1 < 0 || s2 < 0 || m1 > 5 || s1 > 5) return undefined;
  return hours * 3600 + (m1 * 10 + m2) * 60 + s1 * 10 + s2;
}

/** `HH:MM:SS` (hours may exceed 24), `MM:SS`, or a plain number of seconds → seconds. */
export function parseDurationSeconds(v: unknown): number | null | undefined {
  if (isAbsent(v)) return null;
  if (typeof v === "number") return Number.isFinite(v) && v >= 0 ? Math.round(v) : undefined;
  if (typeof v !== "string") return undefined;
  return plainHms(v) ?? durationText(v);
}

/** Any string form parseDurationSeconds takes, → seconds (undefined: not a duration). */
export function durationText(v: string): number | undefined {
  const s = v.trim();
  if (!s.includes(":")) {
    const n = Number(s);
    return Number.isFinite(n) && n >= 0 ? Math.round(n) : undefined;
  }
  const parts = s.split(":");
  if (parts.length > 3) return undefined;
  let total = 0;
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i];
    if (!/^\d+(\.\d+)?$/.test(p)) return undefined;
    const n = Number(p);
    // Minutes and seconds below the leading unit must be < 60.
    if (i > 0 && n >= 60) return undefined;
    total = total * 60 + n;
  }
  return Math.round(total);
}

export function toHms(v: unknown): number | null | Bad {
  const s = parseDurationSeconds(v);
  if (s === undefined) return new Bad(`expected HH:MM:SS, MM:SS or seconds, got ${describe(v)}`);
  return s !== null && s > MAX_MINUTES * 60 ? new Bad(`expected a duration of at most ${MAX_MINUTES.toLocaleString("en-US")} minutes, got ${describe(v)}`) : s;
}

/** Decimal minutes on a participant; an `HH:MM:SS` string is tolerated too. */
export function toMinutes(v: unknown): number | null | Bad {
  if (isAbsent(v)) return null;
  if (typeof v === "string" && v.includes(":")) {
    const s = parseDurationSeconds(v);
    if (s !== undefined && s !== null) return s <= MAX_MINUTES * 60 ? s / 60 : outOfRange(v);
  } else {
    const n = toNumber(v);
    if (n !== undefined) return n >= 0 && n <= MAX_MINUTES ? n : outOfRange(v);
  }
  return new Bad(`expected decimal minutes, got ${describe(v)}`);
}

export function toArray(v: unknown): unknown[] | Bad {
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v : new Bad(`expected an array, got ${describe(v)}`);
}

/** Rounding of derived decimals (minutes from seconds) to what a record can say. */
export const round6 = (n: number) => Math.round(n * 1e6) / 1e6;
