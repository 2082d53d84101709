import { sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import type { Filters } from "./filters";
import { callFacts, participantFacts, resolveApps, round3, visibleApps, type Scope } from "./query";
import { dayNumberToDate, localDayNumber, offsetSegments, offsetSql } from "./tz";

/** Per participant (per app: a uid is an app's user). Minutes are summed from the
 * participant rows' own totalAudioMinutes / totalVideoMinutes / totalDuration. */
export interface ParticipantUsageRow {
  app: string;
  uid: string;
  /** Distinct calls the uid is listed in. */
  calls: number;
  /** Distinct calls the uid joined. */
  joined: number;
  /** Distinct calls where the uid's row is `unanswered`. */
  unanswered: number;
  audioMinutes: number;
  videoMinutes: number;
  /** The participant rows' totalDuration (decimal minutes). */
  totalMinutes: number;
  firstCallAt: number | null;
  lastCallAt: number | null;
}

interface RawParticipantRow {
  appPk: number;
  uid: string;
  calls: number;
  joined: number;
  unanswered: number;
  audio: number;
  video: number;
  totalMin: number;
  firstStart: number | null;
  lastStart: number | null;
}

/** Every participant matching the filters, most calls first (then app, uid). */
export function getParticipantUsage(db: Db, f: Filters, scope: Scope): ParticipantUsageRow[] {
  const appPks = resolveApps(db, f, scope);
  const appIds = new Map(visibleApps(db, scope).map((a) => [a.pk, a.appId]));
  const rows = db.all<RawParticipantRow>(sql`SELECT app_pk AS appPk, uid, sum(listed) AS calls, sum(joined) AS joined,
      sum(unanswered) AS unanswered, sum(audio) AS audio, sum(video) AS video, sum(total_min) AS totalMin,
      min(first_start) AS firstStart, max(last_start) AS lastStart
    FROM (${participantFacts(f, appPks)}) GROUP BY app_pk, uid HAVING sum(listed) > 0
    ORDER BY calls DESC, app_pk, uid`);
  return rows.map((r) => ({
    app: appIds.get(r.appPk) ?? String(r.appPk),
    uid: r.uid,
    calls: r.calls,
    joined: r.joined,
    unanswered: r.unanswered,
    audioMinutes: round3(r.audio),
    videoMinutes: round3(r.video),
    totalMinutes: round3(r.totalMin),
    firstCallAt: r.firstStart,
    lastCallAt: r.lastStart,
  }));
}

export interface AppUsageRow {
  app: string;
  name: string;
  calls: number;
  audioMinutes: number;
  videoMinutes: number;
  /** audioMinutes + videoMinutes. */
  totalMinutes: number;
  /** Calls with a recording (platform flag or a recording webhook). */
  recordings: number;
  /** Distinct uids listed in the app's matching calls. */
  participants: number;
}

/** Per tenant app the caller may see (each requested app, even with no calls). */
export function getAppUsage(db: Db, f: Filters, scope: Scope): AppUsageRow[] {
  const appPks = resolveApps(db, f, scope);
  const apps = visibleApps(db, scope).filter((a) => appPks === "all" || appPks.includes(a.pk));
  const totals = db.all<{ appPk: number; calls: number; audio: number; video: number; rec: number }>(sql`SELECT app_pk AS appPk,
      sum(calls) AS calls, sum(audio) AS audio, sum(video) AS video, sum(CASE WHEN dims >= 180 THEN calls ELSE 0 END) AS rec
    FROM (${callFacts(f, appPks, { grain: "day" })}) GROUP BY app_pk`);
  const people = db.all<{ appPk: number; n: number }>(sql`SELECT app_pk AS appPk, count(DISTINCT uid) AS n
    FROM (${participantFacts(f, appPks)}) WHERE listed > 0 GROUP BY app_pk`);
  const byApp = new Map(totals.map((t) => [t.appPk, t]));
  const peopleByApp = new Map(people.map((p) => [p.appPk, p.n]));
  return apps.map((a) => {
    const t = byApp.get(a.pk);
    const audio = t?.audio ?? 0;
    const video = t?.video ?? 0;
    return {
      app: a.appId,
      name: a.name,
      calls: t?.calls ?? 0,
      audioMinutes: round3(audio),
      videoMinutes: round3(video),
      totalMinutes: round3(audio + video),
      recordings: t?.rec ?? 0,
      participants: peopleByApp.get(a.pk) ?? 0,
    };
  });
}

export interface DailyUsageRow {
  /** Local date `YYYY-MM-DD` in `tz`. */
  date: string;
  calls: number;
  audioMinutes: number;
  videoMinutes: number;
  /** Mean of the calls' totalDuration, in seconds (0 on a day without calls). */
  avgDurationSeconds: number;
  /** Mean totalParticipants per call. */
  avgParticipants: number;
}

/** Longest range the daily report fills with zero days. */
const MAX_DAYS = 366 * 20;

/** Per local day in `tz` (DST-aware), every day from `from` to `to` (or the data's
 * first to last day) present, days without calls as zeros. */
export function getDailyUsage(db: Db, f: Filters, scope: Scope): DailyUsageRow[] {
  const appPks = resolveApps(db, f, scope);
  const facts = callFacts(f, appPks, { grain: "q15" });
  let lo = f.from;
  let hi = f.to;
  if (lo === undefined || hi === undefined) {
    const ext = db.get<{ lo: number | null; hi: number | null }>(sql`SELECT min(unit) * 900 AS lo, max(unit) * 900 + 900 AS hi FROM (${facts}) WHERE calls <> 0`);
    if (!ext || ext.lo === null || ext.hi === null) return [];
    lo ??= ext.lo;
    hi ??= ext.hi;
  }
  if (hi <= lo) return [];
  const segments = offsetSegments(f.tz, lo, hi);
  const off = offsetSql(segments, "unit * 900");
  const rows = db.all<{ day: number; calls: number; audio: number; video: number; durS: number; parts: number }>(sql`SELECT
      (unit * 900 + ${sql.raw(off)}) / 86400 AS day, sum(calls) AS calls, sum(audio) AS audio, sum(video) AS video,
      sum(dur_s) AS durS, sum(parts) AS parts
    FROM (${facts}) WHERE calls <> 0 GROUP BY 1`);
  const byDay = new Map(rows.map((r) => [r.day, r]));
  const first = localDayNumber(f.tz, lo);
  const last = localDayNumber(f.tz, hi - 1);
  const out: DailyUsageRow[] = [];
  for (let d = first; d <= last && d - first < MAX_DAYS; d++) {
    const r = byDay.get(d);
    const calls = r?.calls ?? 0;
    out.push({
      date: dayNumberToDate(d),
      calls,
      audioMinutes: round3(r?.audio ?? 0),
      videoMinutes: round3(r?.video ?? 0),
      avgDurationSeconds: calls ? round3(r!.durS / calls) : 0,
      avgParticipants: calls ? round3(r!.parts / calls) : 0,
    });
  }
  return out;
}
