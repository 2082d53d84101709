import type { Db } from "@/db/client";
import type { Filters } from "../../../filters";
import { resolveApps, visibleApps, type Scope } from "../../../scope";
import { round3, type AppUsageRow, type DailyUsageRow, type ParticipantUsageRow } from "../../../report-types";
import { dailyOf } from "../scan/quarter";
import { peopleOf, type PeopleNeed } from "../scan/people";
import { perAppOf } from "../scan/per-app";
import { startExtentOf, storeStartBounds } from "../scan/selection";
import { personMatcher } from "../../../person";
import { dayNumberToDate, localDayNumber, offsetSegments } from "@/lib/time/tz";


/** Every participant matching the filters, most calls first (then app, uid). */
export function getParticipantUsage(db: Db, f: Filters, scope: Scope): ParticipantUsageRow[] {
  const { p, rowOf, byCalls } = participantSums(db, f, scope);
  return Array.from(p.ids).sort(byCalls).map(rowOf);
}

/**
 * One page of the participants in the requested order (`sort=minutes`: total minutes,
 * then the report's own order — calls, app pk, uid bytes, as ClickHouse orders them,
 * decision 0014 §10; `order=asc` the reverse), and how many there are: the order of the CSV (report-answerers.ts sortedParticipants),
 * but only the page's rows are built. A warehouse of many light users holds hundreds of
 * thousands of uids, and a row object and a locale comparison for each took longer than
 * the scan: the first pages come from one pass that keeps the best `page × perPage`.
 */
export function getParticipantPage(db: Db, f: Filters, scope: Scope): { rows: ParticipantUsageRow[]; total: number } {
  const { p, rowOf, byCalls } = participantSums(db, f, scope, f.sort === "minutes" ? "page-minutes" : "page");
  const minutes = (u: number) => round3(p.total[u]);
  const byMinutes = (x: number, y: number) => minutes(y) - minutes(x) || byCalls(x, y);
  const desc = f.sort === "minutes" ? byMinutes : byCalls;
  const order = f.order === "asc" ? (x: number, y: number) => desc(y, x) : desc;
  const from = (f.page - 1) * f.perPage;
  const page = firstInOrder(p.ids, f.page * f.perPage, order).slice(from);
  p.complete(page); // the page's rows only: the other uids' sums are left partial (scan/people-deferred.ts)
  return { rows: page.map(rowOf), total: p.ids.length };
}

/** The first k of `ids` by `cmp` (a total order), in order: one pass keeping the best k while k is small, else a sort. */
export function firstInOrder(ids: Int32Array, k: number, cmp: (a: number, b: number) => number): number[] {
  if (k * 8 >= ids.length) return Array.from(ids).sort(cmp).slice(0, k);
  const best: number[] = [];
  for (const u of ids) {
    if (best.length === k && cmp(u, best[k - 1]!) >= 0) continue;
    let lo = 0, hi = best.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cmp(best[mid]!, u) < 0) lo = mid + 1;
      else hi = mid;
    }
    best.splice(lo, 0, u);
    if (best.length > k) best.pop();
  }
  return best;
}

function participantSums(db: Db, f: Filters, scope: Scope, need: PeopleNeed = "all") {
  const appPks = resolveApps(db, f, scope);
  const appIds = new Map(visibleApps(db, scope).map((a) => [a.pk, a.appId]));
  const sums = peopleOf(db, f, appPks, need);
  const { idApp, idUid } = sums.store;
  // `person`: only the uids found by the search (their sums are whole: the filter is on rows, not calls).
  const found = personMatcher(f.person);
  const p = found ? { ...sums, ids: sums.ids.filter((u) => found(idUid[u]!)) } : sums;
  const appOf = (u: number) => appIds.get(idApp[u]) ?? String(idApp[u]);
  const byCalls = (x: number, y: number) => p.listed[y] - p.listed[x] || idApp[x] - idApp[y] || compareBinary(idUid[x], idUid[y]);
  const rowOf = (u: number): ParticipantUsageRow => ({
    app: appOf(u),
    uid: idUid[u],
    calls: p.listed[u],
    joined: p.joined[u],
    unanswered: p.unanswered[u],
    audioMinutes: round3(p.audio[u]),
    videoMinutes: round3(p.video[u]),
    totalMinutes: round3(p.total[u]),
    firstCallAt: p.first[u],
    lastCallAt: p.last[u],
  });
  return { p, rowOf, byCalls };
}


/** Per tenant app the caller may see (each requested app, even with no calls). */
export function getAppUsage(db: Db, f: Filters, scope: Scope): AppUsageRow[] {
  const appPks = resolveApps(db, f, scope);
  const apps = visibleApps(db, scope).filter((a) => appPks === "all" || appPks.includes(a.pk));
  const t = perAppOf(db, f, appPks);
  return apps.map((a) => {
    const k = a.pk < t.calls.length ? a.pk : -1; // an app with no call yet: beyond the store's apps
    const audio = k < 0 ? 0 : t.audio[k];
    const video = k < 0 ? 0 : t.video[k];
    return {
      app: a.appId,
      name: a.name,
      calls: k < 0 ? 0 : t.calls[k],
      audioMinutes: round3(audio),
      videoMinutes: round3(video),
      totalMinutes: round3(audio + video),
      recordings: k < 0 ? 0 : t.rec[k],
      participants: k < 0 ? 0 : t.people[k],
    };
  });
}


/** Longest range the daily report fills with zero days. */
const MAX_DAYS = 366 * 20;

/** Per local day in `tz` (DST-aware), every day from `from` to `to` (or the data's
 * first to last day) present, days without calls as zeros. */
export function getDailyUsage(db: Db, f: Filters, scope: Scope): DailyUsageRow[] {
  const appPks = resolveApps(db, f, scope);
  const range = f.from !== undefined && f.to !== undefined ? { lo: f.from, hi: f.to, trim: false } : openRange(db, f, appPks);
  if (!range) return [];
  const { lo, hi } = range;
  if (hi <= lo) return [];
  const first = localDayNumber(f.tz, lo);
  const last = localDayNumber(f.tz, hi - 1);
  const days = Math.min(last - first + 1, MAX_DAYS);
  const segments = offsetSegments(f.tz, lo, hi);
  const bounds = segments.slice(1).map((x) => x.from);
  const offsets = segments.map((x) => x.offset);
  const { calls, audio, video, durS, parts } = dailyOf(db, f, appPks, first, days, bounds, offsets);
  // An open end was taken from the store's start bounds: the data's first / last day is the first / last with calls.
  let d0 = 0;
  let d1 = days;
  if (range.trim && f.from === undefined) while (d0 < d1 && calls[d0] === 0) d0++;
  if (range.trim && f.to === undefined) while (d1 > d0 && calls[d1 - 1] === 0) d1--;
  const out: DailyUsageRow[] = [];
  for (let d = d0; d < d1; d++) {
    const n = calls[d];
    out.push({
      date: dayNumberToDate(first + d),
      calls: n,
      audioMinutes: round3(audio[d]),
      videoMinutes: round3(video[d]),
      avgDurationSeconds: n ? round3(durS[d] / n) : 0,
      avgParticipants: n ? round3(parts[d] / n) : 0,
    });
  }
  return out;
}

/**
 * The range of a daily report with an open end: the matching calls' first to last start.
 * Found without a pass of its own where it can be: the store's start bounds hold every
 * call, and in a zone whose offsets and changes fall on quarter hours the local day of
 * a start is that of its quarter, so the days between the first and the last with calls
 * are what the matching calls' extent gives (`trim`: drop the empty days at the open
 * ends). Otherwise (another zone, more than MAX_DAYS) one pass finds the extent first.
 */
function openRange(db: Db, f: Filters, appPks: number[] | "all"): { lo: number; hi: number; trim: boolean } | null {
  const bounds = storeStartBounds(db);
  if (bounds === null) return null;
  const lo = f.from ?? Math.floor(bounds.min / 900) * 900;
  const hi = f.to ?? Math.floor(bounds.max / 900) * 900 + 900;
  const quarterly = offsetSegments(f.tz, lo, hi).every((x, k) => x.offset % 900 === 0 && (k === 0 || x.from % 900 === 0));
  if (hi > lo && quarterly && localDayNumber(f.tz, hi - 1) - localDayNumber(f.tz, lo) < MAX_DAYS) return { lo, hi, trim: true };
  const { count, min, max } = startExtentOf(db, f, appPks);
  if (count === 0) return null;
  return { lo: f.from ?? Math.floor(min / 900) * 900, hi: f.to ?? Math.floor(max / 900) * 900 + 900, trim: false };
}

/** SQLite's BINARY order of two strings (UTF-8 bytes = code points), for `ORDER BY uid`. */
export function compareBinary(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}
