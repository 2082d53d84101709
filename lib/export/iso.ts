import { offsetAt } from "@/lib/analytics/tz";

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

export function isoFormatter(tz = "UTC"): IsoFormatter {
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
  let lastDate = "";
  // The same instant twice in a row (a call's startedAt and startAt): written once.
  let lastT = Number.NaN;
  let lastText = "";
  return (epochSeconds) => {
    if (epochSeconds === null || epochSeconds === undefined || !Number.isFinite(epochSeconds)) return "";
    const t = Math.floor(epochSeconds);
    if (t === lastT) return lastText;
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
      lastDate = date;
    }
    lastT = t;
    lastText = lastDate + clockOf(local - day * DAY) + last.text;
    return lastText;
  };
}
