import type { Db } from "@/db/client";
import type { Filters } from "../../../filters";
import { resolveApps, visibleApps, type Scope } from "../../../scope";
import { round3, type AppUsageRow, type DailyUsageRow, type ParticipantUsageRow } from "../../../report-types";
import { dailyOf } from "../scan/quarter";
import { peopleOf } from "../scan/people";
import { perAppOf } from "../scan/per-app";
import { startExtentOf } from "../scan/selection";
import { dayNumberToDate, localDayNumber, offsetSegments } from "../../../tz";


/** Every participant matching the filters, most calls first (then app, uid). */
export function getParticipantUsage(db: Db, f: Filters, scope: Scope): ParticipantUsageRow[] {
  const appPks = resolveApps(db, f, scope);
  const appIds = new Map(visibleApps(db, scope).map((a) => [a.pk, a.appId]));
  const p = peopleOf(db, f, appPks);
  const { idApp, idUid } = p.store;
  const ids = Array.from(p.ids).sort((x, y) => p.listed[y] - p.listed[x] || idApp[x] - idApp[y] || compareBinary(idUid[x], idUid[y]));
  return ids.map((u) => ({
    app: appIds.get(idApp[u]) ?? String(idApp[u]),
    uid: idUid[u],
    calls: p.listed[u],
    joined: p.joined[u],
    unanswered: p.unanswered[u],
    audioMinutes: round3(p.audio[u]),
    videoMinutes: round3(p.video[u]),
    totalMinutes: round3(p.total[u]),
    firstCallAt: p.first[u],
    lastCallAt: p.last[u],
  }));
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
  let lo = f.from;
  let hi = f.to;
  if (lo === undefined || hi === undefined) {
    const { count, min, max } = startExtentOf(db, f, appPks);
    if (count === 0) return [];
    lo ??= Math.floor(min / 900) * 900;
    hi ??= Math.floor(max / 900) * 900 + 900;
  }
  if (hi <= lo) return [];
  const first = localDayNumber(f.tz, lo);
  const last = localDayNumber(f.tz, hi - 1);
  const days = Math.min(last - first + 1, MAX_DAYS);
  const segments = offsetSegments(f.tz, lo, hi);
  const bounds = segments.slice(1).map((x) => x.from);
  const offsets = segments.map((x) => x.offset);
  const { calls, audio, video, durS, parts } = dailyOf(db, f, appPks, first, days, bounds, offsets);
  const out: DailyUsageRow[] = [];
  for (let d = 0; d < days; d++) {
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
