/**
 * Schema v2 benchmark data (lib/clickhouse/schema-v2.ts), made inside ClickHouse like
 * bench/clickhouse-data.ts and from the same call shape (its callColumns: the platform
 * mix), written into each shard's local signed tables, so that the views fill the
 * pre-aggregates exactly as a writer's inserts would. A share of the calls was re-synced:
 * each has its first state, that state's cancel row and a second state (the duration one
 * minute longer), left unmerged, as after a sync that changed them.
 */
import { BENCH_APPS, callColumns, onServer } from "./clickhouse-data";
import { CALLS_V2, PARTICIPANTS_V2 } from "@/lib/clickhouse/schema-v2";

/** One call in this many was re-synced (three rows: state, cancel, new state). */
export const RESYNCED_EVERY = 10;

/** Each call's rows: 1 its first state, 2 that state's cancel row, 3 its second state (re-synced calls only). */
const VARIANTS = `arrayJoin(if(n % ${RESYNCED_EVERY} = 0, [1, 2, 3], [1])) AS variant, if(variant = 2, -1, 1) AS sign_, toUInt64(if(variant = 3, 2, 1)) AS version_, variant = 3 AS changed`;

const CALL_V2_VALUES: Record<string, string> = {
  sign: "toInt8(sign_)",
  version: "version_",
  app_pk: "app_pk",
  start_at: "toDateTime(if(never, initiated_at, started))",
  session_id: "session_id",
  type: "type_",
  type_other: "''",
  mode: "mode_",
  mode_other: "''",
  status: "status_",
  status_other: "''",
  receiver_type: "if(mode_ = 'call', 'user', 'group')",
  receiver_type_other: "''",
  platform_has_recording: "toUInt8(NOT never AND (cityHash64(n, 16) % 1000000) / 1000000 < 0.3)",
  total_audio_minutes_x1000: "if(type_ = 'audio', arraySum(p_minutes), 0)",
  total_video_minutes_x1000: "if(type_ = 'video', arraySum(p_minutes), 0)",
  total_duration_minutes_x1000: "intDiv((wall + 60 * changed) * 1000 + 30, 60)",
  duration_seconds: "wall + 60 * changed",
  total_participants: "k",
  initiated_at: "toNullable(initiated_at)",
  started_at: "if(never, NULL, toNullable(started))",
  ended_at: "toNullable(ended_at_)",
  initiator: "toNullable(initiator_)",
  receiver: "toNullable(receiver_)",
  arrival: "toUInt64(n + 1)",
};

/** The calls given a recording link (generateV2Sql's recordings), whose states carry has_link = 1 as the writers keep it. */
const LINKED = `NOT never AND (${CALL_V2_VALUES.platform_has_recording} OR cityHash64(n, 17) % 100 = 0)`;
CALL_V2_VALUES.has_link = `toUInt8(${LINKED})`;

const PARTICIPANT_V2_VALUES: Record<string, string> = {
  sign: "toInt8(sign_)",
  version: "version_",
  app_pk: "app_pk",
  start_at: "toDateTime(if(never, initiated_at, started))",
  session_code: "cityHash64(session_id)",
  seq: "toUInt32(i)",
  uid_code: "cityHash64(uids[i + 1])",
  first_of_uid: "toUInt8(indexOf(uids, uids[i + 1]) = i + 1)",
  is_joined: "toUInt8(joined[i + 1])",
  is_unanswered: "toUInt8(joined[i + 1] = 0)",
  total_audio_minutes_x1000: "if(type_ = 'audio', p_minutes[i + 1], 0)",
  total_video_minutes_x1000: "if(type_ = 'video', p_minutes[i + 1], 0)",
  total_duration_minutes_x1000: "p_minutes[i + 1]",
  // Migration 0008's columns (schema-v2.ts PARTICIPANT_CALL_COLUMNS): first joined / unanswered row of the uid, the call's dimensions.
  first_joined_of_uid: "toUInt8(joined[i + 1] = 1 AND arrayEnumerateUniq(uids, joined)[i + 1] = 1)",
  first_unanswered_of_uid: "toUInt8(joined[i + 1] = 0 AND arrayEnumerateUniq(uids, joined)[i + 1] = 1)",
  type: CALL_V2_VALUES.type,
  type_other: "''",
  mode: CALL_V2_VALUES.mode,
  mode_other: "''",
  status: CALL_V2_VALUES.status,
  status_other: "''",
  receiver_type: CALL_V2_VALUES.receiver_type,
  receiver_type_other: "''",
  total_participants: CALL_V2_VALUES.total_participants,
};

function insertSql(table: string, columns: ReadonlyArray<readonly [string, string]>, values: Record<string, string>, from: number, count: number, shard: number, shards: number, arrayJoin = ""): string {
  const names = columns.map(([c]) => c);
  const missing = names.find((c) => !(c in values));
  if (missing) throw new Error(`no generated value for ${table}.${missing}`);
  const cols = names.map((c) => `\`${c}\``).join(", ");
  // Every column is named inside the subquery (18.16 prunes a subquery's columns without seeing those a lambda captures).
  const named = names.map((c) => `${values[c]} AS \`v_${c}\``).join(",\n    ");
  return `INSERT INTO ${table} (${cols})
  SELECT ${names.map((c) => `\`v_${c}\``).join(", ")}
  FROM (SELECT *, ${named} FROM (SELECT ${callColumns()}, ${VARIANTS} FROM numbers(${from}, ${count}) WHERE cityHash64(app_pk, session_id) % ${shards} = ${shard})${arrayJoin})`;
}

/** The statements writing calls [from, from + count) of shard `shard` into its local v2 tables (`db`.`<name>_local`). */
export function generateV2Sql(db: string, from: number, count: number, shard: number, shards: number): string[] {
  return [
    insertSql(`\`${db}\`.\`${CALLS_V2.name}_local\``, CALLS_V2.columns, CALL_V2_VALUES, from, count, shard, shards),
    insertSql(`\`${db}\`.\`${PARTICIPANTS_V2.name}_local\``, PARTICIPANTS_V2.columns, PARTICIPANT_V2_VALUES, from, count, shard, shards, " ARRAY JOIN idx AS i"),
    // The raw record of each call, its newest version only (what a writer keeps).
    `INSERT INTO \`${db}\`.call_raw_local (app_pk, session_id, version, raw)
  SELECT app_pk, session_id, toUInt64(1 + (n % ${RESYNCED_EVERY} = 0)), concat('{"sessionId":"', session_id, '","mid":"', mid_, '","type":"', type_, '","mode":"', mode_, '","status":"', status_, '","initiator":"', initiator_, '","receiver":"', receiver_, '","receiverType":"', if(mode_ = 'call', 'user', 'group'), '","initiatedAt":', toString(initiated_at), ',"endedAt":', toString(ended_at_), ',"totalParticipants":', toString(k), '}')
  FROM (SELECT ${callColumns()} FROM numbers(${from}, ${count}) WHERE cityHash64(app_pk, session_id) % ${shards} = ${shard})`,
    // A recording link (the recording_generated webhook) for every call the platform flags, and
    // for one call in a hundred of the others (a link the next sync has not flagged yet): the
    // reports' "has a recording" looks each call up in these.
    `INSERT INTO \`${db}\`.recordings_local (app_pk, session_id, start_key, version, deleted, recording_url, recording_date, duration, start_time, received_ms)
  SELECT app_pk, session_id, started, toUInt64(1), toUInt8(0), concat('https://recordings.example/', session_id, '.mp4'), NULL, toFloat64(wall), started, (ended_at_ + 60) * 1000
  FROM (SELECT ${callColumns()} FROM numbers(${from}, ${count}) WHERE cityHash64(app_pk, session_id) % ${shards} = ${shard})
  WHERE ${LINKED}`,
  ];
}

/** The uids the generated participants carry (user0…user2499 in every app), coded, for `uids`. */
export function generateUidsSql(db: string, apps: number): string {
  return `INSERT INTO \`${db}\`.uids (app_pk, uid_code, uid)
  SELECT toUInt32(1 + intDiv(number, 2500)) AS app_pk, cityHash64(uid) AS uid_code, concat('user', toString(number % 2500)) AS uid FROM numbers(${apps * 2500})`;
}

/**
 * Generates `calls` calls into the v2 tables of `db` (migrated: tables and views on every
 * shard), a million at a time, each shard writing its own calls into its local tables
 * (the views fill its pre-aggregates); the uids once, through the Distributed table.
 * Returns the seconds it took.
 */
export async function generateV2Calls(servers: ReadonlyArray<{ host: string; httpPort: number }>, password: string, db: string, calls: number, log: (line: string) => void): Promise<number> {
  await onServer(servers[0], password, generateUidsSql(db, BENCH_APPS) + " SETTINGS insert_distributed_sync = 1");
  const t0 = performance.now();
  const chunk = 1_000_000;
  for (let from = 0; from < calls; from += chunk) {
    const count = Math.min(chunk, calls - from);
    await Promise.all(servers.map(async (s, i) => {
      for (const statement of generateV2Sql(db, from, count, i, servers.length)) await onServer(s, password, statement);
    }));
    log(`  v2: generated ${(from + count).toLocaleString("en")} / ${calls.toLocaleString("en")} calls (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  }
  return (performance.now() - t0) / 1000;
}
