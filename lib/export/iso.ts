import { offsetAt } from "@/lib/time/tz";

/**
 * Epoch seconds as ISO 8601 local time with its offset, in one zone:
 * `2026-03-05T14:03:00+01:00` (UTC: `2026-03-05T13:03:00Z`). Built for the CSVs' hot
 * loops: the zone's offset is looked up once per 15-minute bucket (every offset in use is
 * a multiple of 15 minutes, so it cannot change inside one) and each day's date once.
 */
export type IsoFormatter = (epochSeconds: number | null | undefined) => string;

const BUCKET = 900;
const DAY = 86_400;
const PAD2 = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, "0"));

/** "HH:MM:SS" of every second of a day, built on first use (one flat string each: an ISO time is then three pieces, not eight). */
let clock: string[] | undefined;
function clockOf(second: number): string {
  clock ??= Array.from({ length: DAY }, (_, i) => `${PAD2[Math.floor(i / 3600)]}:${PAD2[Math.floor((i % 3600) / 60)]}:${PAD2[i % 60]}`);
  return clock[second];
}

function offsetText(offset: number): string {
  if (offset === 0) return "Z";
  const a = Math.abs(offset);
  return `${offset < 0 ? "-" : "+"}${PAD2[Math.floor(a / 3600)]}:${PAD2[Math.floor((a % 3600) / 60)]}`;
}

/**
 * The zone's local time of an instant, with the caches the formatters share: `at(t)`
 * sets `date` ("YYYY-MM-DDT" of the local day), `second` (of the local day) and `offset`
 * (its text: "Z", "+05:45") for whole seconds `t`.
 */
function zoneClock(tz: string) {
  const utc = tz === "UTC" || tz === "Etc/UTC";
  const offsets = new Map<number, { offset: number; text: string }>();
  const dates = new Map<number, string>();
  const offsetOf = (t: number) => {
    const bucket = t - (((t % BUCKET) + BUCKET) % BUCKET);
    let hit = offsets.get(bucket);
    if (!hit) {
      const offset = utc ? 0 : offsetAt(tz, bucket);
      hit = { offset, text: offsetText(offset) };
      if (offsets.size > 100_000) offsets.clear();
      offsets.set(bucket, hit);
    }
    return hit;
  };
  // The last bucket and day looked up: an export's rows come in time order, so most rows
  // hit them and skip the maps.
  let lastBucket = Number.NaN;
  let last = { offset: 0, text: "Z" };
  let lastDay = Number.NaN;
  const clock = { date: "", second: 0, offset: "Z", at };
  function at(t: number): void {
    const bucket = t - (((t % BUCKET) + BUCKET) % BUCKET);
    if (bucket !== lastBucket) {
      last = offsetOf(t);
      lastBucket = bucket;
    }
    const local = t + last.offset;
    const day = Math.floor(local / DAY);
    if (day !== lastDay) {
      let date = dates.get(day);
      if (date === undefined) {
        date = `${new Date(day * DAY * 1000).toISOString().slice(0, 10)}T`;
        if (dates.size > 100_000) dates.clear();
        dates.set(day, date);
      }
      lastDay = day;
      clock.date = date;
    }
    clock.second = local - day * DAY;
    clock.offset = last.text;
  }
  return clock;
}

export function isoFormatter(tz = "UTC"): IsoFormatter {
  const clock = zoneClock(tz);
  // The same instant twice in a row (a call's startedAt and startAt): written once.
  let lastT = Number.NaN;
  let lastText = "";
  return (epochSeconds) => {
    if (epochSeconds === null || epochSeconds === undefined || !Number.isFinite(epochSeconds)) return "";
    const t = Math.floor(epochSeconds);
    if (t === lastT) return lastText;
    clock.at(t);
    lastT = t;
    lastText = clock.date + clockOf(clock.second) + clock.offset;
    return lastText;
  };
}

/** `isoFormatter`'s text written as bytes into a buffer (the calls CSV's byte writer, lib/export/csv-bytes.ts): no string a cell. */
export interface IsoBytes {
  /** Writes the ISO time of `epochSeconds` at `pos` (nothing if it is not finite); returns the position after it. */
  write(buf: Uint8Array, pos: number, epochSeconds: number): number;
}

const ZERO = 48;

export function isoBytes(tz = "UTC"): IsoBytes {
  const clock = zoneClock(tz);
  return {
    write(buf, pos, epochSeconds) {
      if (!Number.isFinite(epochSeconds)) return pos;
      clock.at(Math.floor(epochSeconds));
      const { date, second, offset } = clock;
      let p = pos;
      for (let i = 0; i < date.length; i++) buf[p++] = date.charCodeAt(i);
      const h = Math.floor(second / 3600);
      const m = Math.floor((second - h * 3600) / 60);
      const s = second - h * 3600 - m * 60;
      buf[p] = ZERO + Math.floor(h / 10);
      buf[p + 1] = ZERO + (h % 10);
      buf[p + 2] = 58;
      buf[p + 3] = ZERO + Math.floor(m / 10);
      buf[p + 4] = ZERO + (m % 10);
      buf[p + 5] = 58;
      buf[p + 6] = ZERO + Math.floor(s / 10);
      buf[p + 7] = ZERO + (s % 10);
      p += 8;
      for (let i = 0; i < offset.length; i++) buf[p++] = offset.charCodeAt(i);
      return p;
    },
  };
}
