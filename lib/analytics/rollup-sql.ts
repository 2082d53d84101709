/**
 * The SQL that keeps the rollups (db/schema/analytics.ts) exact: triggers on `calls`
 * and `call_participants`, and a full rebuild (backfill of an existing warehouse, and
 * the reference the tests compare the triggers against). The migration
 * `0004_analytics_triggers.sql` is this module's `migrationSql()` output, written once;
 * see docs/decisions/0006-analytics-rollups.md for why triggers.
 */
import { dimsSql, durBucketSql } from "./dims";

/** Calls that run longer than this many 15-minute boundaries stop counting in the
 * heatmap after it (about 104 days). */
export const MAX_CROSSINGS = 10_000;

const monthSql = (r: string) => `CAST(strftime('%Y%m', ${r}.start_at, 'unixepoch') AS INTEGER)`;
/** First and last UTC day number of the calendar month of `r.start_at`. */
const monthFirstDaySql = (r: string) => `CAST(julianday(${r}.start_at, 'unixepoch', 'start of month') - 2440587.5 AS INTEGER)`;
const monthLastDaySql = (r: string) => `CAST(julianday(${r}.start_at, 'unixepoch', 'start of month', '+1 month') - 2440587.5 AS INTEGER) - 1`;
const crossingsSql = (r: string) => `max(0, (max(coalesce(${r}.ended_at, ${r}.start_at), ${r}.start_at) - 1) / 900 - ${r}.start_at / 900)`;

/** Adds (sign 1) or removes (sign -1) one call row `r` from the call rollups. */
function callRollupStatements(r: string, sign: 1 | -1): string[] {
  const s = sign === 1 ? "" : "-";
  const d = dimsSql(r);
  const out = [
    `INSERT INTO analytics_call_q15 (app_pk, bucket, dims, pc, calls, audio, video, total_min, dur_s, parts)
     VALUES (${r}.app_pk, ${r}.start_at / 900, ${d}, ${r}.total_participants, ${s}1, ${s}${r}.total_audio_minutes,
       ${s}${r}.total_video_minutes, ${s}${r}.total_duration_minutes, ${s}${r}.duration_seconds, ${s}${r}.total_participants)
     ON CONFLICT (app_pk, bucket, dims, pc) DO UPDATE SET calls = calls + excluded.calls, audio = audio + excluded.audio,
       video = video + excluded.video, total_min = total_min + excluded.total_min, dur_s = dur_s + excluded.dur_s,
       parts = parts + excluded.parts`,
    `INSERT INTO analytics_call_day (app_pk, day, dims, pc, dur_bucket, calls, audio, video, total_min, dur_s, parts)
     VALUES (${r}.app_pk, ${r}.start_at / 86400, ${d}, ${r}.total_participants, ${durBucketSql(r)}, ${s}1,
       ${s}${r}.total_audio_minutes, ${s}${r}.total_video_minutes, ${s}${r}.total_duration_minutes, ${s}${r}.duration_seconds,
       ${s}${r}.total_participants)
     ON CONFLICT (app_pk, day, dims, pc, dur_bucket) DO UPDATE SET calls = calls + excluded.calls, audio = audio + excluded.audio,
       video = video + excluded.video, total_min = total_min + excluded.total_min, dur_s = dur_s + excluded.dur_s,
       parts = parts + excluded.parts`,
    `INSERT INTO analytics_call_q15 (app_pk, bucket, dims, pc, crossing)
     SELECT ${r}.app_pk, ${r}.start_at / 900 + 1 + n, ${d}, ${r}.total_participants, ${s}1 FROM analytics_numbers
     WHERE n < min(${MAX_CROSSINGS}, ${crossingsSql(r)})
     ON CONFLICT (app_pk, bucket, dims, pc) DO UPDATE SET crossing = crossing + excluded.crossing`,
  ];
  if (sign === -1) {
    // Cells emptied by a removal go, so that float residue never shows as a ghost row.
    out.push(
      `DELETE FROM analytics_call_q15 WHERE app_pk = ${r}.app_pk AND bucket BETWEEN ${r}.start_at / 900
         AND ${r}.start_at / 900 + min(${MAX_CROSSINGS}, ${crossingsSql(r)}) AND calls = 0 AND crossing = 0`,
      `DELETE FROM analytics_call_day WHERE app_pk = ${r}.app_pk AND day = ${r}.start_at / 86400 AND calls = 0`,
    );
  }
  return out;
}

/** SQL of a participant cell key match for table alias-less UPDATE/DELETE. */
const cellKey = (grain: "day" | "month", c: string, uid: string) =>
  `app_pk = ${c}.app_pk AND ${grain} = ${grain === "day" ? `${c}.start_at / 86400` : monthSql(c)} AND uid = ${uid} AND dims = ${dimsSql(c)}`;

/**
 * Recomputes first/last call start of participant cells of call `c` whose bound was
 * `c.start_at`. `uid` names the uid inside the recompute (a column of the updated row
 * or a trigger value); `outerUid` selects the updated rows.
 */
function recomputeBounds(grain: "day" | "month", c: string, uid: string, outerUid: string): string[] {
  const table = `analytics_participant_${grain}`;
  const source = (dir: "ASC" | "DESC") =>
    grain === "day"
      ? `(SELECT c2.start_at FROM calls c2 WHERE c2.app_pk = ${c}.app_pk AND c2.start_at >= (${c}.start_at / 86400) * 86400
           AND c2.start_at < (${c}.start_at / 86400 + 1) * 86400 AND ${dimsSql("c2")} = ${dimsSql(c)}
           AND EXISTS (SELECT 1 FROM call_participants q WHERE q.call_pk = c2.pk AND q.uid = ${uid})
           ORDER BY c2.start_at ${dir} LIMIT 1)`
      : `(SELECT ${dir === "ASC" ? "min(d.first_start)" : "max(d.last_start)"} FROM analytics_participant_day d
           WHERE d.app_pk = ${c}.app_pk AND d.day BETWEEN ${monthFirstDaySql(c)} AND ${monthLastDaySql(c)}
           AND d.uid = ${uid} AND d.dims = ${dimsSql(c)})`;
  const key = `app_pk = ${c}.app_pk AND ${grain} = ${grain === "day" ? `${c}.start_at / 86400` : monthSql(c)} AND ${outerUid} AND dims = ${dimsSql(c)}`;
  return [
    `UPDATE ${table} SET first_start = ${source("ASC")} WHERE ${key} AND first_start = ${c}.start_at`,
    `UPDATE ${table} SET last_start = ${source("DESC")} WHERE ${key} AND last_start = ${c}.start_at`,
  ];
}

/** Participant rollups: add (sign 1) or remove (sign -1) one participant row `p` whose
 * call is read from `calls`. `others` = the uid's other rows in the same call. */
function participantRowStatements(p: string, sign: 1 | -1): string[] {
  const others = (extra: string) =>
    `NOT EXISTS (SELECT 1 FROM call_participants q WHERE q.call_pk = ${p}.call_pk AND q.uid = ${p}.uid AND q.pk <> ${p}.pk${extra})`;
  const listed = others("");
  const joined = `(${p}.is_joined <> 0 AND ${others(" AND q.is_joined <> 0")})`;
  const unans = `(${p}.state = 'unanswered' AND ${others(" AND q.state = 'unanswered'")})`;
  const out: string[] = [];
  for (const grain of ["day", "month"] as const) {
    const table = `analytics_participant_${grain}`;
    const key = grain === "day" ? "c.start_at / 86400" : monthSql("c");
    if (sign === 1) {
      out.push(
        `INSERT INTO ${table} (app_pk, ${grain}, uid, dims, listed, joined, unanswered, audio, video, total_min, first_start, last_start)
         SELECT c.app_pk, ${key}, ${p}.uid, ${dimsSql("c")}, ${listed}, ${joined}, ${unans}, ${p}.total_audio_minutes,
           ${p}.total_video_minutes, ${p}.total_duration_minutes, c.start_at, c.start_at
         FROM calls c WHERE c.pk = ${p}.call_pk
         ON CONFLICT (app_pk, ${grain}, uid, dims) DO UPDATE SET listed = listed + excluded.listed, joined = joined + excluded.joined,
           unanswered = unanswered + excluded.unanswered, audio = audio + excluded.audio, video = video + excluded.video,
           total_min = total_min + excluded.total_min, first_start = min(first_start, excluded.first_start),
           last_start = max(last_start, excluded.last_start)`,
      );
    } else {
      out.push(
        wrapWithCall(
          `UPDATE ${table} SET listed = listed - ${listed}, joined = joined - ${joined}, unanswered = unanswered - ${unans},
             audio = audio - ${p}.total_audio_minutes, video = video - ${p}.total_video_minutes,
             total_min = total_min - ${p}.total_duration_minutes
           WHERE ${cellKey(grain, "c", `${p}.uid`)}`,
          p,
        ),
        wrapWithCall(`DELETE FROM ${table} WHERE ${cellKey(grain, "c", `${p}.uid`)} AND listed = 0`, p),
      );
    }
  }
  return out;
}

/** After a removal: fix first/last of the cells where the removed call was the bound. */
function participantBoundsAfterRemoval(p: string): string[] {
  // Only when the uid is no longer in the call at all.
  const gone = `NOT EXISTS (SELECT 1 FROM call_participants q WHERE q.call_pk = ${p}.call_pk AND q.uid = ${p}.uid AND q.pk <> ${p}.pk)`;
  return (["day", "month"] as const)
    .flatMap((grain) => recomputeBounds(grain, "c", `${p}.uid`, `uid = ${p}.uid`).map((stmt) => `${stmt} AND ${gone}`))
    .map((stmt) => wrapWithCall(stmt, p));
}

/** Runs a statement that refers to alias `c` (the call of row `p`) once, if the call exists. */
function wrapWithCall(stmt: string, p: string): string {
  // SQLite triggers have no variables: substitute `c.col` by a scalar subquery on calls.
  return stmt.replace(/\bc\.(\w+)/g, (_m, col: string) => `(SELECT ${col} FROM calls WHERE pk = ${p}.call_pk)`);
}

/** Moves every participant of call `old` → `new` when the call's cell changes. */
function participantMoveStatements(): string[] {
  const agg = (r: string) =>
    `SELECT uid, 1 AS listed, max(is_joined <> 0) AS joined, max(state = 'unanswered') AS unans, sum(total_audio_minutes) AS audio,
       sum(total_video_minutes) AS video, sum(total_duration_minutes) AS total_min FROM call_participants WHERE call_pk = ${r}.pk GROUP BY uid`;
  const out: string[] = [];
  for (const grain of ["day", "month"] as const) {
    const table = `analytics_participant_${grain}`;
    const keyOf = (r: string) => (grain === "day" ? `${r}.start_at / 86400` : monthSql(r));
    out.push(
      `UPDATE ${table} SET listed = ${table}.listed - s.listed, joined = ${table}.joined - s.joined,
         unanswered = ${table}.unanswered - s.unans, audio = ${table}.audio - s.audio, video = ${table}.video - s.video,
         total_min = ${table}.total_min - s.total_min
       FROM (${agg("old")}) AS s
       WHERE ${table}.app_pk = old.app_pk AND ${table}.${grain} = ${keyOf("old")} AND ${table}.uid = s.uid AND ${table}.dims = ${dimsSql("old")}`,
      `DELETE FROM ${table} WHERE app_pk = old.app_pk AND ${grain} = ${keyOf("old")} AND dims = ${dimsSql("old")} AND listed = 0
         AND uid IN (SELECT uid FROM call_participants WHERE call_pk = old.pk)`,
    );
  }
  // Bounds of the old cells (the call row now holds the new values, so it is not found there).
  for (const grain of ["day", "month"] as const) {
    out.push(
      ...recomputeBounds(grain, "old", `analytics_participant_${grain}.uid`, "uid IN (SELECT uid FROM call_participants WHERE call_pk = old.pk)"),
    );
  }
  for (const grain of ["day", "month"] as const) {
    const table = `analytics_participant_${grain}`;
    const keyOf = grain === "day" ? "new.start_at / 86400" : monthSql("new");
    out.push(
      `INSERT INTO ${table} (app_pk, ${grain}, uid, dims, listed, joined, unanswered, audio, video, total_min, first_start, last_start)
       SELECT new.app_pk, ${keyOf}, s.uid, ${dimsSql("new")}, s.listed, s.joined, s.unans, s.audio, s.video, s.total_min, new.start_at, new.start_at
       FROM (${agg("new")}) AS s WHERE true
       ON CONFLICT (app_pk, ${grain}, uid, dims) DO UPDATE SET listed = listed + excluded.listed, joined = joined + excluded.joined,
         unanswered = unanswered + excluded.unanswered, audio = audio + excluded.audio, video = video + excluded.video,
         total_min = total_min + excluded.total_min, first_start = min(first_start, excluded.first_start),
         last_start = max(last_start, excluded.last_start)`,
    );
  }
  return out;
}

const CALL_COLUMNS_WATCHED = [
  "app_pk", "start_at", "ended_at", "type", "mode", "status", "receiver_type", "has_recording",
  "total_audio_minutes", "total_video_minutes", "total_duration_minutes", "duration_seconds", "total_participants",
];

function trigger(name: string, when: string, table: string, condition: string | null, body: string[]): string {
  return `CREATE TRIGGER ${name} ${when} ON ${table} FOR EACH ROW${condition ? ` WHEN ${condition}` : ""}
BEGIN
${body.map((s) => `  ${s.trim()};`).join("\n")}
END`;
}

export function triggerStatements(): string[] {
  const changed = CALL_COLUMNS_WATCHED.map((c) => `old.${c} IS NOT new.${c}`).join(" OR ");
  const cellChanged = `old.app_pk IS NOT new.app_pk OR old.start_at IS NOT new.start_at OR ${dimsSql("old")} <> ${dimsSql("new")}`;
  return [
    trigger("analytics_calls_ai", "AFTER INSERT", "calls", null, callRollupStatements("new", 1)),
    trigger("analytics_calls_au", "AFTER UPDATE", "calls", changed, [...callRollupStatements("old", -1), ...callRollupStatements("new", 1)]),
    trigger("analytics_calls_au_participants", "AFTER UPDATE", "calls", cellChanged, participantMoveStatements()),
    // Participants go first, while their call still exists (their triggers read it);
    // the foreign-key cascade then finds nothing left to delete.
    trigger("analytics_calls_bd", "BEFORE DELETE", "calls", null, [
      "DELETE FROM call_participants WHERE call_pk = old.pk",
      ...callRollupStatements("old", -1),
    ]),
    trigger("analytics_participants_ai", "AFTER INSERT", "call_participants", null, participantRowStatements("new", 1)),
    trigger("analytics_participants_ad", "AFTER DELETE", "call_participants", null, [
      ...participantRowStatements("old", -1),
      ...participantBoundsAfterRemoval("old"),
    ]),
    trigger("analytics_participants_au", "AFTER UPDATE", "call_participants", null, [
      ...participantRowStatements("old", -1),
      ...participantBoundsAfterRemoval("old"),
      ...participantRowStatements("new", 1),
    ]),
  ];
}

/** Empties and refills every rollup from the fact tables (one statement per table). */
export function rebuildStatements(): string[] {
  const d = dimsSql("c");
  const pAgg = (grain: "day" | "month") => {
    const key = grain === "day" ? "c.start_at / 86400" : monthSql("c");
    return `INSERT INTO analytics_participant_${grain} (app_pk, ${grain}, uid, dims, listed, joined, unanswered, audio, video, total_min, first_start, last_start)
      SELECT c.app_pk, ${key}, x.uid, ${d}, count(*), sum(x.joined), sum(x.unans), sum(x.audio), sum(x.video), sum(x.total_min),
        min(c.start_at), max(c.start_at)
      FROM (SELECT call_pk, uid, max(is_joined <> 0) AS joined, max(state = 'unanswered') AS unans, sum(total_audio_minutes) AS audio,
              sum(total_video_minutes) AS video, sum(total_duration_minutes) AS total_min
            FROM call_participants GROUP BY call_pk, uid) AS x
      JOIN calls c ON c.pk = x.call_pk
      GROUP BY 1, 2, 3, 4`;
  };
  return [
    "DELETE FROM analytics_call_q15",
    "DELETE FROM analytics_call_day",
    "DELETE FROM analytics_participant_day",
    "DELETE FROM analytics_participant_month",
    `INSERT INTO analytics_call_q15 (app_pk, bucket, dims, pc, calls, audio, video, total_min, dur_s, parts, crossing)
      SELECT app_pk, bucket, dims, pc, sum(calls), sum(audio), sum(video), sum(total_min), sum(dur_s), sum(parts), sum(crossing) FROM (
        SELECT c.app_pk, c.start_at / 900 AS bucket, ${d} AS dims, c.total_participants AS pc, 1 AS calls, c.total_audio_minutes AS audio,
          c.total_video_minutes AS video, c.total_duration_minutes AS total_min, c.duration_seconds AS dur_s, c.total_participants AS parts, 0 AS crossing
        FROM calls c
        UNION ALL
        SELECT c.app_pk, c.start_at / 900 + 1 + n.n, ${d}, c.total_participants, 0, 0, 0, 0, 0, 0, 1
        FROM calls c JOIN analytics_numbers n ON n.n < min(${MAX_CROSSINGS}, ${crossingsSql("c")})
      ) GROUP BY 1, 2, 3, 4`,
    `INSERT INTO analytics_call_day (app_pk, day, dims, pc, dur_bucket, calls, audio, video, total_min, dur_s, parts)
      SELECT c.app_pk, c.start_at / 86400, ${d}, c.total_participants, ${durBucketSql("c")}, count(*), sum(c.total_audio_minutes),
        sum(c.total_video_minutes), sum(c.total_duration_minutes), sum(c.duration_seconds), sum(c.total_participants)
      FROM calls c GROUP BY 1, 2, 3, 4, 5`,
    pAgg("day"),
    pAgg("month"),
  ];
}

/** The custom migration: the numbers table, the triggers, a backfill of existing rows,
 * and the `calls` indexes the call list sorts by. */
export function migrationSql(): string {
  const statements = [
    `INSERT OR IGNORE INTO analytics_numbers (n) WITH RECURSIVE k(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM k WHERE n < ${MAX_CROSSINGS - 1}) SELECT n FROM k`,
    // Call list: newest first across apps, and the other sort keys (see lib/analytics/calls.ts).
    "CREATE INDEX IF NOT EXISTS `calls_start_idx` ON `calls` (`start_at`)",
    "CREATE INDEX IF NOT EXISTS `calls_duration_idx` ON `calls` (`duration_seconds`)",
    "CREATE INDEX IF NOT EXISTS `calls_participants_idx` ON `calls` (`total_participants`)",
    "CREATE INDEX IF NOT EXISTS `calls_minutes_idx` ON `calls` ((`total_audio_minutes` + `total_video_minutes`))",
    ...triggerStatements(),
    ...rebuildStatements(),
  ];
  return `-- Generated from lib/analytics/rollup-sql.ts (migrationSql). Do not edit by hand.\n${statements.join("\n--> statement-breakpoint\n")}\n`;
}
