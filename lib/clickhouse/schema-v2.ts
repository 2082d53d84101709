import { CALLS, localName, qualified, quoteIdentifier, type Placement, type TableSpec } from "./schema";

/**
 * Schema v2 of the call facts (issue 25; docs/decisions/0034-clickhouse-schema-v2.md),
 * built the way ClickHouse answers at 100M calls. Created on every shard by ClickHouse
 * migration 0005; written by the sync and the copy (writer-v2.ts), filled from a v1
 * warehouse by the move (move-v2.ts, `npm run db:migrate`), and read by every
 * ClickHouse-mode report (lib/analytics/engines/clickhouse/conditions.ts). The shapes are
 * proven on 18.16 shards and on chdb by schema-v2.integration.test.ts, the writers by
 * writer-v2.integration.test.ts.
 *
 * - Facts are signed state rows (`VersionedCollapsingMergeTree(sign, version)`): a writer
 *   that replaces a call's state writes the old state again with sign −1 (its cancel row)
 *   and the new one with +1; a delete is a cancel row alone. Reads sum `sign` (counts) and
 *   `sign × value` (totals) and never need FINAL: a cancel row and its state cancel in any
 *   sum before the merge collapses them, whatever the order they arrived in.
 * - Sort key: app, then start time, then session: a report reads the app's time range.
 *   Monthly partitions. A call whose start changes moves: its cancel row carries the old
 *   start (old partition, old key), its new state the new one.
 * - The closed sets (type, mode, status, receiver type) are Enum8 codes; a value the
 *   platform may add later is kept exactly in a `<dim>_other` String, '' otherwise (an
 *   almost empty column costs next to nothing compressed), so answers stay exact.
 * - The raw JSON and everything only one call's page shows are in `call_raw`, read by key.
 * - Participants have their own signed rows, on their call's shard, uids and the call coded.
 * - Pre-aggregates (`SummingMergeTree`) are fed by materialized views over the signed
 *   rows: per app × 15-minute bucket × filter dimensions (15 minutes: every IANA zone's
 *   offset, +05:30, +05:45 and DST shifts included, is a multiple of 15 minutes, so a local
 *   day is a whole number of buckets), and per app × uid × month for participants.
 */

/** The closed sets as the platform documents them (lib/analytics/dims.ts), coded. */
export const CLOSED_SETS = {
  type: ["audio", "video"],
  mode: ["call", "meet", "presenter"],
  status: ["ended", "unanswered", "rejected", "ongoing"],
  receiver_type: ["user", "group"],
} as const;

export type ClosedSet = keyof typeof CLOSED_SETS;

/** `unset` (null), `other` (a value outside the documented set, kept in `<dim>_other`), then the set. */
export function enumType(set: ClosedSet): string {
  const names = ["unset", "other", ...CLOSED_SETS[set]];
  return `Enum8(${names.map((n, i) => `'${n}' = ${i}`).join(", ")})`;
}

/** A value of a closed set as its two columns: the code, and the text when the code is `other`. */
export function encodeClosed(set: ClosedSet, value: string | null | undefined): { code: string; other: string } {
  if (value === null || value === undefined) return { code: "unset", other: "" };
  return (CLOSED_SETS[set] as readonly string[]).includes(value) ? { code: value, other: "" } : { code: "other", other: value };
}

/** The SQL giving a closed set's value back as the platform sent it (NULL when unset). */
export function decodeClosed(set: ClosedSet, prefix = ""): string {
  const code = `${prefix}${set}`;
  return `if(${code} = 'unset', NULL, if(${code} = 'other', ${prefix}${set}_other, toString(${code})))`;
}

/** A uid's code: the same in every writer without asking anyone (2^64 values: a collision is not expected below ~10^9 uids). */
export const UID_CODE_SQL = (uid: string) => `cityHash64(${uid})`;

/**
 * A call's session code: how its participant rows name their call (8 bytes instead of the
 * session id's ~36 repeated on every row). Joined to `calls_v2.session_code`. Within one
 * app and start second, a collision of two calls' codes is not expected.
 */
export const SESSION_CODE_SQL = (sessionId: string) => `cityHash64(${sessionId})`;

/**
 * The shard of a call: `cityHash64(app_pk, session_id)`, the key of v1's per-call tables
 * (calls, recordings, client_sessions; schema.ts). Every row of a call, in v1 and v2, is on
 * one shard, so the reports join a call's signed rows to its recordings and client
 * sessions on each shard without moving rows between shards. The writers insert into each
 * shard's local table themselves (writer-v2.ts) and pick the shard as the Distributed
 * table would: this hash modulo the shards' total weight.
 */
export const callShardSql = (appPk: string, sessionId: string) => `cityHash64(${appPk}, ${sessionId})`;
export const SHARD_BY_CALL = callShardSql("app_pk", "session_id");

/**
 * The same hash from a row's session code alone (participants_v2 keeps the code, not the
 * id): `cityHash64(a, b)` is CityHash's Hash128to64 of the hashes of its arguments, an
 * integer's being `intHash64` and a string's `cityHash64` (the session code itself), so
 * this equals callShardSql for the code's session. Written out because participants_v2's
 * Distributed table must route a row (the move inserts through it) where its call is; the
 * equality is tested on 18.16 and chdb (schema-v2.integration.test.ts).
 */
export function shardByCallFromCode(appPk: string, sessionCode: string): string {
  const kMul = "toUInt64(11376068507788127593)"; // 0x9ddfea08eb382d69, CityHash's Hash128to64 multiplier
  const a0 = `bitXor(intHash64(${appPk}), ${sessionCode}) * ${kMul}`;
  const a = `bitXor(${a0}, bitShiftRight(${a0}, 47))`;
  const b0 = `bitXor(${sessionCode}, ${a}) * ${kMul}`;
  return `bitXor(${b0}, bitShiftRight(${b0}, 47)) * ${kMul}`;
}

/**
 * `has_link` (ClickHouse migration 0007): 1 when a `recording_generated` webhook delivered a
 * link for the call, written by the writer of the state (writer-v2.ts looks the batch's
 * links up; link-flags.ts writes the change of a call whose link came after its state).
 * "hasRecording" is `platform_has_recording OR has_link`, so the pre-aggregates answer it
 * too. Last in every table it is in: the migration appends it.
 */
export const HAS_LINK_COLUMN = ["has_link", "UInt8"] as const;

export const CLOSED_COLUMNS = (Object.keys(CLOSED_SETS) as ClosedSet[]).flatMap((set) => [[set, enumType(set)], [`${set}_other`, "String"]] as const);

/** The signed state rows of calls: what every report reads when no pre-aggregate answers it. */
export const CALLS_V2: TableSpec = {
  name: "calls_v2",
  columns: [
    /** +1: the call's state from `version` on; −1: the cancel row of that state (replaced or deleted). */
    ["sign", "Int8"],
    /** The state's version (the writer's stamp): a cancel row repeats the version of the state it cancels. */
    ["version", "UInt64"],
    ["app_pk", "UInt32"],
    /** startedAt, or initiatedAt for calls never started: what time filters use. */
    ["start_at", "DateTime"],
    // Its session code (what participants_v2 rows name it by) is the column CALLS_V2_SESSION_CODE,
    // added by migration 0006 and computed by ClickHouse at each insert (so not in this list,
    // which is what writers send).
    ["session_id", "String"],
    ...CLOSED_COLUMNS,
    ["platform_has_recording", "UInt8"],
    ["total_audio_minutes_x1000", "Int64"],
    ["total_video_minutes_x1000", "Int64"],
    ["total_duration_minutes_x1000", "Int64"],
    ["duration_seconds", "Int64"],
    ["total_participants", "UInt32"],
    ["initiated_at", "Nullable(Int64)"],
    ["started_at", "Nullable(Int64)"],
    ["ended_at", "Nullable(Int64)"],
    ["initiator", "Nullable(String)"],
    ["receiver", "Nullable(String)"],
    // The call's mid and first sighting are on its page only: in call_raw.
    ["arrival", "UInt64"],
    HAS_LINK_COLUMN,
  ],
  engine: "VersionedCollapsingMergeTree(sign, version)",
  partitionBy: "toYYYYMM(start_at)",
  orderBy: "(app_pk, start_at, session_id)",
  shardBy: SHARD_BY_CALL,
};

/**
 * `calls_v2.session_code` (ClickHouse migration 0006): SESSION_CODE_SQL of the session id,
 * a DEFAULT — ClickHouse computes it at every insert, a writer never sends it (not
 * MATERIALIZED: 18.16's Distributed table would compute it and send it on to the shards,
 * which refuse a value for a MATERIALIZED column). What the
 * reads test a call's membership of a set by (recording links, cancelled states, calls
 * listing a uid: analytics/engines/clickhouse/conditions.ts): 8 bytes of integer a row to
 * read and hash instead of the ~36-byte session id.
 */
export const CALLS_V2_SESSION_CODE = ["session_code", `UInt64 DEFAULT ${SESSION_CODE_SQL("session_id")}`] as const;

/**
 * The by-key side of a call: one row per state written (`ReplacingMergeTree(version)`
 * keeps the newest), ordered by `(app_pk, session_id)`, so one call's page and a writer's
 * lookup of a batch's keys read a few granules. Reports never touch it.
 *
 * Its columns are v1's `calls` (schema.ts CALLS: the call, its participants as parallel
 * arrays with their details, the raw record, the sync's content hash and source), so that
 * one call's page reads it as it read `calls`, and a v1 warehouse moves into it with one
 * `INSERT … SELECT *, '' FROM calls FINAL`. Plus:
 * - `previous`: the state this one replaced (rows-v2.ts CallStateV2 as JSON, without
 *   details; '' for a new call or a moved one), kept so that a change whose signed rows
 *   did not all land (a writer killed between its inserts) can be completed by the next
 *   writer of the call (writer-v2.ts; docs/decisions/0034-clickhouse-schema-v2.md, "Writers").
 * `deleted` = 1: the call was deleted (its signed rows are cancelled).
 */
export const CALL_RAW: TableSpec = {
  name: "call_raw",
  columns: [...CALLS.columns, ["previous", "String"], HAS_LINK_COLUMN],
  engine: "ReplacingMergeTree(version)",
  orderBy: "(app_pk, session_id)",
  shardBy: SHARD_BY_CALL,
};

/**
 * Participant columns added by ClickHouse migration 0008 (and filled there for rows written
 * before it; participants-fill.ts), so that every participants figure is a signed sum over
 * participants_v2 alone (docs/decisions/0034, "Participants as signed sums"):
 * - `first_joined_of_uid` / `first_unanswered_of_uid`: 1 on the first row of a uid in its
 *   call state that is joined / unanswered. `sum(sign × flag)` per uid is then the number
 *   of distinct live calls it joined / left unanswered (a rejoin counts once), which
 *   `uniqExactIf` over the live rows answered before.
 * - the call's filter dimensions (closed sets and participant count), copied from the call
 *   state the rows belong to (a cancel row carries its state's values, as in calls_v2), so
 *   a filter on them reads the participant rows without looking the calls up. Filters on
 *   what the rows do not hold (hasRecording, uid, weekday/hour) still look the calls up.
 * At the end of the list: ALTER TABLE ADD COLUMN appends, so a migrated table and a table
 * created with them have the same column order.
 */
export const PARTICIPANT_CALL_COLUMNS = [
  ["first_joined_of_uid", "UInt8"],
  ["first_unanswered_of_uid", "UInt8"],
  ...CLOSED_COLUMNS,
  ["total_participants", "UInt32"],
] as const;

/** Signed participant rows (one per participant session of a call), on their call's shard: only what reports sum or filter. */
export const PARTICIPANTS_V2: TableSpec = {
  name: "participants_v2",
  columns: [
    ["sign", "Int8"],
    ["version", "UInt64"],
    ["app_pk", "UInt32"],
    /** The call's start: the participants of an app's time range are one range of the key. */
    ["start_at", "DateTime"],
    /** The call's SESSION_CODE_SQL (calls_v2.session_code); the session id itself is in calls_v2 and call_raw. */
    ["session_code", "UInt64"],
    ["seq", "UInt32"],
    ["uid_code", "UInt64"],
    /** 1 on the first row of each uid in its call: a call counts once per participant however often they rejoined. */
    ["first_of_uid", "UInt8"],
    ["is_joined", "UInt8"],
    /** 1 when the participant's state is `unanswered`: the participants report counts the calls a uid left unanswered. */
    ["is_unanswered", "UInt8"],
    ["total_audio_minutes_x1000", "Int64"],
    ["total_video_minutes_x1000", "Int64"],
    ["total_duration_minutes_x1000", "Int64"],
    // The per-participant details (state, device id, join and leave times, mid) are not
    // here: no report sums or filters them, and as strings on every row they were most of
    // the table's bytes. One call's page reads them from call_raw's `state`.
    ...PARTICIPANT_CALL_COLUMNS,
  ],
  engine: "VersionedCollapsingMergeTree(sign, version)",
  partitionBy: "toYYYYMM(start_at)",
  orderBy: "(app_pk, start_at, session_code, seq)",
  shardBy: shardByCallFromCode("app_pk", "session_code"),
};

/** uid codes back to uids (every writer inserts the uids it codes; repeats collapse). */
export const UIDS: TableSpec = {
  name: "uids",
  columns: [
    ["app_pk", "UInt32"],
    ["uid_code", "UInt64"],
    ["uid", "String"],
  ],
  engine: "ReplacingMergeTree",
  orderBy: "(app_pk, uid_code)",
  shardBy: "cityHash64(app_pk, uid_code)",
};

/** The dimensions a calls pre-aggregate keeps: every call filter but uid and the weekday/hour one (has_link last: migration 0007 appended it). */
const BUCKET_DIMENSIONS = ["app_pk", "bucket", ...CLOSED_COLUMNS.map(([n]) => n), "platform_has_recording", "total_participants", "has_link"];

/** Calls per app × 15-minute bucket × filter dimensions: counts and totals, signed sums. */
export const CALLS_BY_BUCKET: TableSpec = {
  name: "calls_by_bucket",
  columns: [
    ["app_pk", "UInt32"],
    ["bucket", "DateTime"],
    ...CLOSED_COLUMNS,
    ["platform_has_recording", "UInt8"],
    ["total_participants", "UInt32"],
    ["calls", "Int64"],
    ["total_audio_minutes_x1000", "Int64"],
    ["total_video_minutes_x1000", "Int64"],
    ["total_duration_minutes_x1000", "Int64"],
    ["duration_seconds", "Int64"],
    HAS_LINK_COLUMN,
  ],
  engine: "SummingMergeTree((calls, total_audio_minutes_x1000, total_video_minutes_x1000, total_duration_minutes_x1000, duration_seconds))",
  partitionBy: "toYYYYMM(bucket)",
  orderBy: `(${BUCKET_DIMENSIONS.join(", ")})`,
  shardBy: "cityHash64(app_pk, bucket)",
};

/**
 * The same per app × UTC month: a range of whole months (an all-time report has no edges)
 * reads this, hundreds of rows a year instead of the 15-minute table's millions at 10M
 * calls; the partial months at a range's edges come from CALLS_BY_BUCKET.
 */
export const CALLS_BY_MONTH: TableSpec = {
  ...CALLS_BY_BUCKET,
  name: "calls_by_month",
  columns: CALLS_BY_BUCKET.columns.map(([n, t]) => (n === "bucket" ? (["month", "Date"] as const) : ([n, t] as const))),
  // Monthly partitions of a few hundred rows each: the move from v1 (move-v2.ts) rewrites a
  // month whole by dropping that month from every table its rows feed.
  partitionBy: "toYYYYMM(month)",
  orderBy: CALLS_BY_BUCKET.orderBy.replace("bucket", "month"),
  shardBy: "cityHash64(app_pk, month)",
};

/**
 * Per app × uid × UTC month: every sum of the participants reports (ClickHouse migration
 * 0010 recreated it with these columns): the distinct live calls listing the uid
 * (`first_of_uid`), joined and left unanswered (`first_joined_of_uid` /
 * `first_unanswered_of_uid`: a rejoin counts once), and minutes. Read for the whole months
 * of a range by the participants, apps and engagement reports when their filters are only
 * apps, time and the person search (reports/participant-sums.ts). First / last call are
 * min / max, which a signed sum cannot keep: they come from the rows.
 */
export const PARTICIPANTS_BY_MONTH: TableSpec = {
  name: "participants_by_month",
  columns: [
    ["app_pk", "UInt32"],
    ["uid_code", "UInt64"],
    ["month", "Date"],
    ["calls", "Int64"],
    ["joined", "Int64"],
    ["unanswered", "Int64"],
    ["total_audio_minutes_x1000", "Int64"],
    ["total_video_minutes_x1000", "Int64"],
    ["total_duration_minutes_x1000", "Int64"],
  ],
  engine: "SummingMergeTree((calls, joined, unanswered, total_audio_minutes_x1000, total_video_minutes_x1000, total_duration_minutes_x1000))",
  partitionBy: "toYYYYMM(month)",
  orderBy: "(app_pk, uid_code, month)",
  shardBy: "cityHash64(app_pk, uid_code)",
};

/**
 * The same sums per app × uid × UTC month × the call's closed sets (type, mode, status,
 * receiver type, with their `_other` texts), ClickHouse migration 0012: what a participants,
 * apps or engagement report filtered on those dimensions reads for its whole months
 * (reports/participant-sums.ts), which PARTICIPANTS_BY_MONTH cannot answer. A separate
 * table, not PARTICIPANTS_BY_MONTH's key widened: the unfiltered reports (the dashboard's
 * default) keep reading one row per uid and month. It grows with uids × months × the
 * combinations a uid's calls take (at most 2 types × 2 modes × the statuses), not with
 * calls: at the bench's 10M-call density every uid has every combination each month.
 * The closed sets lead the key so that a filter on them reads its own ranges only.
 */
export const PARTICIPANTS_BY_MONTH_DIMS: TableSpec = {
  name: "participants_by_month_dims",
  columns: [
    ["app_pk", "UInt32"],
    ...CLOSED_COLUMNS,
    ["month", "Date"],
    ["uid_code", "UInt64"],
    ...PARTICIPANTS_BY_MONTH.columns.filter(([n]) => !["app_pk", "uid_code", "month"].includes(n)),
  ],
  engine: PARTICIPANTS_BY_MONTH.engine,
  partitionBy: "toYYYYMM(month)",
  // The codes lead (receiver type before mode: the dashboard's groups filter); the `_other`
  // texts ('' unless the code is `other`) close the key, which a SummingMergeTree sums by.
  orderBy: "(app_pk, type, receiver_type, mode, status, month, uid_code, type_other, receiver_type_other, mode_other, status_other)",
  shardBy: "cityHash64(app_pk, uid_code)",
};

/**
 * The concurrency heatmap's pre-aggregate (ClickHouse migration 0011; decision 0034, "The
 * heatmap from a pre-aggregate (session 18)"): per app × UTC quarter hour × the closed sets
 * (type, mode, status, receiver type: not the participant count and recording flags, which
 * made nearly every row its own combination), the calls starting in the quarter (`starts`), the calls
 * running at its start (`running`: a call counts at every quarter start in (its start
 * quarter, its last quarter]) and the calls whose last quarter it is (`last`: the open
 * window's extent), as signed sums. A call's quarters are HEATMAP_QUARTERS_SQL, the
 * heatmap's own (capped at MAX_CROSSINGS; an ongoing call only in its start quarter).
 * Partitioned by the call's START month (`month`), not the quarter's: a call's rows run
 * past its month's end, and a start month is what the move, the retention and the fill
 * drop and rewrite whole.
 */
export const CONCURRENCY_BY_QUARTER: TableSpec = {
  name: "concurrency_by_quarter",
  columns: [
    // In concurrencyByQuarterSelect's order: migration 0011's fill inserts its rows by position.
    ["app_pk", "UInt32"],
    ...CLOSED_COLUMNS,
    ["quarter", "DateTime"],
    /** The start month of the calls summed in the row: the partition. */
    ["month", "Date"],
    ["starts", "Int64"],
    ["running", "Int64"],
    ["last", "Int64"],
  ],
  engine: "SummingMergeTree((starts, running, last))",
  partitionBy: "toYYYYMM(month)",
  // Time right after the app: a window of the heatmap is one range of the key per app.
  orderBy: `(app_pk, quarter, ${CLOSED_COLUMNS.map(([n]) => n).join(", ")})`,
  shardBy: "cityHash64(app_pk, quarter)",
};

/** Calls that run longer than this many quarter hours stop counting after it (report-types.ts MAX_CROSSINGS, as the in-memory engine). */
export const HEATMAP_MAX_CROSSINGS = 10_000;

/**
 * A signed call row's first and last quarter hour (quarter numbers: epoch seconds / 900) as
 * SQL over calls_v2: `start_s`, `q_start`, `q_last`. The last quarter is the one holding the
 * call's last second (its start quarter while ongoing), at most HEATMAP_MAX_CROSSINGS after
 * the start. The heatmap's read of the signed rows and the pre-aggregate's view share it.
 */
const Q_START_SQL = "toInt64(floor(toUInt32(start_at) / 900))";
const Q_LAST_SQL = (qStart: string) =>
  `greatest(${qStart}, least(toInt64(floor((greatest(ifNull(ended_at, toInt64(toUInt32(start_at))), toInt64(toUInt32(start_at))) - 1) / 900)), ${qStart} + ${HEATMAP_MAX_CROSSINGS}))`;
export const HEATMAP_QUARTERS_SQL = `toInt64(toUInt32(start_at)) AS start_s, ${Q_START_SQL} AS q_start, ${Q_LAST_SQL("q_start")} AS q_last`;

/** concurrency_by_quarter's rows summed from the signed call rows of `source` (its view, and migration 0011's fill). */
export function concurrencyByQuarterSelect(source: string, where = ""): string {
  const dims = `app_pk, ${CLOSED_COLUMNS.map(([n]) => quoteIdentifier(n)).join(", ")}`;
  // One row per quarter of each call, from its start quarter to its last (arrayJoin of the
  // offsets), in one query level: 18.16 loses a subquery's aliases when it pushes a block
  // through a materialized view ("Unknown identifier").
  const q = "toInt64(toUInt32(quarter) / 900)";
  return `SELECT ${dims},
  toDateTime(((${Q_START_SQL} AS q_start) + toInt64(arrayJoin(range(toUInt64((${Q_LAST_SQL("q_start")} AS q_last) - q_start + 1))))) * 900) AS quarter,
  toStartOfMonth(start_at) AS month,
  sum(toInt64(sign) * (${q} = q_start)) AS starts, sum(toInt64(sign) * (${q} > q_start)) AS running, sum(toInt64(sign) * (${q} = q_last)) AS last
FROM ${source}${where ? ` WHERE ${where}` : ""}
GROUP BY ${dims}, quarter, month`;
}

/** The view feeding concurrency_by_quarter (migration 0011). */
export const CONCURRENCY_VIEW = "concurrency_by_quarter_mv";

export function concurrencyViewStatement(p: Placement, onCluster = false): string {
  const on = onCluster && p.cluster ? ` ON CLUSTER ${quoteIdentifier(p.cluster)}` : "";
  const local = (t: TableSpec) => qualified(p.database, localName(p, t.name));
  return `CREATE MATERIALIZED VIEW IF NOT EXISTS ${qualified(p.database, localName(p, CONCURRENCY_VIEW))}${on} TO ${local(CONCURRENCY_BY_QUARTER)} AS
${concurrencyByQuarterSelect(local(CALLS_V2))}`;
}

export const V2_TABLES = [CALLS_V2, CALL_RAW, PARTICIPANTS_V2, UIDS, CALLS_BY_BUCKET, CALLS_BY_MONTH, PARTICIPANTS_BY_MONTH, PARTICIPANTS_BY_MONTH_DIMS, CONCURRENCY_BY_QUARTER] as const;

/**
 * The materialized views feeding the pre-aggregates, one per local table: each block
 * inserted into a shard's signed rows is summed into that shard's pre-aggregate (the
 * Distributed table in front of it gathers the shards).
 */
export function viewStatements(p: Placement, onCluster = false): string[] {
  return [...callsViewStatements(p, onCluster), participantsViewStatement(p, onCluster), participantsDimsViewStatement(p, onCluster), concurrencyViewStatement(p, onCluster)];
}

/** The view feeding participants_by_month (migration 0010 recreated it with joined / unanswered per distinct call). */
export const PARTICIPANTS_VIEW = "participants_by_month_mv";

export function participantsViewStatement(p: Placement, onCluster = false): string {
  const on = onCluster && p.cluster ? ` ON CLUSTER ${quoteIdentifier(p.cluster)}` : "";
  const local = (t: TableSpec) => qualified(p.database, localName(p, t.name));
  return `CREATE MATERIALIZED VIEW IF NOT EXISTS ${qualified(p.database, localName(p, PARTICIPANTS_VIEW))}${on} TO ${local(PARTICIPANTS_BY_MONTH)} AS
${participantsByMonthSelect(local(PARTICIPANTS_V2))}`;
}

/** The view feeding participants_by_month_dims (migration 0012). */
export const PARTICIPANTS_DIMS_VIEW = "participants_by_month_dims_mv";

export function participantsDimsViewStatement(p: Placement, onCluster = false): string {
  const on = onCluster && p.cluster ? ` ON CLUSTER ${quoteIdentifier(p.cluster)}` : "";
  const local = (t: TableSpec) => qualified(p.database, localName(p, t.name));
  return `CREATE MATERIALIZED VIEW IF NOT EXISTS ${qualified(p.database, localName(p, PARTICIPANTS_DIMS_VIEW))}${on} TO ${local(PARTICIPANTS_BY_MONTH_DIMS)} AS
${participantsByMonthSelect(local(PARTICIPANTS_V2), "", CLOSED_COLUMNS.map(([n]) => n))}`;
}

/**
 * participants_by_month's rows summed from signed participant rows of `source` (the view, and
 * the fill of migration 0010); with `dimensions` (participant columns copied from the call),
 * per those too (participants_by_month_dims, migration 0012).
 */
export function participantsByMonthSelect(source: string, where = "", dimensions: readonly string[] = []): string {
  const dims = dimensions.map((d) => `, ${quoteIdentifier(d)}`).join("");
  return `SELECT app_pk, uid_code, toStartOfMonth(start_at) AS month${dims},
  sum(sign * first_of_uid) AS calls, sum(sign * first_joined_of_uid) AS joined, sum(sign * first_unanswered_of_uid) AS unanswered,
  sum(sign * total_audio_minutes_x1000) AS total_audio_minutes_x1000, sum(sign * total_video_minutes_x1000) AS total_video_minutes_x1000,
  sum(sign * total_duration_minutes_x1000) AS total_duration_minutes_x1000
FROM ${source}${where ? ` WHERE ${where}` : ""}
GROUP BY app_pk, uid_code, month${dims}`;
}

/** The views feeding calls_by_bucket and calls_by_month (migration 0007 recreates them with has_link), by view name. */
export const CALLS_VIEWS = ["calls_by_bucket_mv", "calls_by_month_mv"] as const;

export function callsViewStatements(p: Placement, onCluster = false): string[] {
  const db = p.database;
  const on = onCluster && p.cluster ? ` ON CLUSTER ${quoteIdentifier(p.cluster)}` : "";
  const local = (t: TableSpec) => qualified(db, localName(p, t.name));
  const view = (name: string) => qualified(db, localName(p, name));
  const closed = CLOSED_COLUMNS.map(([n]) => quoteIdentifier(n)).join(", ");
  const callsInto = (target: TableSpec, viewName: string, time: string) =>
    `CREATE MATERIALIZED VIEW IF NOT EXISTS ${view(viewName)}${on} TO ${local(target)} AS
SELECT app_pk, ${time}, ${closed}, platform_has_recording, total_participants, has_link,
  sum(sign) AS calls, sum(sign * total_audio_minutes_x1000) AS total_audio_minutes_x1000,
  sum(sign * total_video_minutes_x1000) AS total_video_minutes_x1000,
  sum(sign * total_duration_minutes_x1000) AS total_duration_minutes_x1000, sum(sign * duration_seconds) AS duration_seconds
FROM ${local(CALLS_V2)}
GROUP BY app_pk, ${time.replace(/^.* AS /, "")}, ${closed}, platform_has_recording, total_participants, has_link`;
  return [
    callsInto(CALLS_BY_BUCKET, "calls_by_bucket_mv", "toStartOfFifteenMinutes(start_at) AS bucket"),
    callsInto(CALLS_BY_MONTH, "calls_by_month_mv", "toStartOfMonth(start_at) AS month"),
  ];
}
