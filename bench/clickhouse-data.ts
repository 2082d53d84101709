/**
 * Benchmark data made inside ClickHouse: N calls shaped like the emulator's "platform" mix
 * (lib/emulator/mixes.ts, lib/emulator/generator.ts), written by `INSERT … SELECT` from
 * `numbers()` straight into each shard's local `calls` table, every call on the shard the
 * Distributed table's sharding key sends it to. Tens of millions of calls through the
 * emulator and the sync would take hours on this machine; this takes minutes and gives
 * the reports the same shape: four apps of unequal size, ten months of history, 60%
 * one-to-one calls (65% audio), 30% meetings (30% audio), 10% presenter (10% audio),
 * 12% unanswered and 7% rejected (groups: unanswered), log-normal durations with the
 * generator's medians, 3-4 joined members a meeting plus up to one no-show, a rejoin in
 * 6% of answered one-to-one calls (about 2.85 participant rows a call), 2,500 uids and
 * 200 groups an app, 30% of answered calls recorded by the platform, and a raw record.
 */

import { NOW as BENCH_NOW } from "./http-reports";

/** Ten months of history, ending where the emulator's does (BENCH_NOW: the report routes' date filters assume it). */
const HISTORY_SECONDS = 10 * 30 * 86_400;
export const BENCH_APPS = 4;

/** A uniform number in [0, 1) drawn from the call's number and a salt. */
const u = (salt: number) => `(cityHash64(n, ${salt}) % 1000000) / 1000000`;

/** One call per number: every column the fact table needs, as aliases (inner query). */
export function callColumns(): string {
  return `
    number AS n,
    ${u(1)} AS r_app,
    toUInt32(multiIf(r_app < 0.5, 1, r_app < 0.75, 2, r_app < 0.9, 3, 4)) AS app_pk,
    toInt64(${BENCH_NOW - 3 * 3600} - toInt64(${u(2)} * ${HISTORY_SECONDS})) AS initiated_at,
    ${u(3)} AS r_mode,
    multiIf(r_mode < 0.6, 'call', r_mode < 0.9, 'meet', 'presenter') AS mode_,
    if(${u(4)} < multiIf(mode_ = 'call', 0.65, mode_ = 'meet', 0.3, 0.1), 'audio', 'video') AS type_,
    ${u(5)} AS r_status,
    multiIf(r_status < 0.12, 'unanswered', r_status < 0.19, if(mode_ = 'call', 'rejected', 'unanswered'), 'ended') AS status_,
    status_ != 'ended' AS never,
    concat('v1.us.bench', toString(app_pk), '.', toString(initiated_at), lower(hex(cityHash64(n, 6)))) AS session_id,
    lower(hex(cityHash64(n, 7))) AS mid_,
    concat('user', toString(cityHash64(n, 8) % 2500)) AS initiator_,
    if(mode_ = 'call', concat('user', toString(cityHash64(n, 9) % 2500)), concat('group', toString(cityHash64(n, 10) % 200))) AS receiver_,
    -- log-normal duration (Box-Muller), the generator's medians and spreads per mode
    sqrt(-2 * log((cityHash64(n, 11) % 1000000 + 1) / 1000001)) * cos(2 * pi() * ${u(12)}) AS z,
    toInt64(multiIf(mode_ = 'call', least(14400, greatest(5, round(240 * exp(z)))),
                    mode_ = 'meet', least(28800, greatest(60, round(1800 * exp(0.7 * z)))),
                    least(28800, greatest(300, round(2700 * exp(0.5 * z)))))) AS dur,
    if(never, 0, dur) AS wall,
    initiated_at + if(mode_ = 'call', 3 + n % 23, n % 6) AS started,
    if(never, initiated_at + if(status_ = 'rejected', 2 + n % 19, 30 + n % 31), started + dur) AS ended_at_,
    3 + (${u(13)} < 0.5) AS want,
    mode_ = 'call' AND NOT never AND ${u(14)} < 0.06 AS rejoin,
    toUInt32(if(mode_ = 'call', 2 + rejoin, want + (${u(15)} < 0.5))) AS k,
    range(k) AS idx,
    arrayMap(i -> NOT never AND (mode_ = 'call' OR i < want), idx) AS joined,
    arrayMap(i -> if(i = 0, initiator_, if(mode_ = 'call', receiver_, concat('user', toString(cityHash64(n, 20 + i) % 2500)))), idx) AS uids,
    -- joined seconds: the initiator and one-to-one calls the whole call (a rejoin splits it), others a bit less
    arrayMap(i -> if(NOT joined[i + 1], 0, if(rejoin AND i > 0, intDiv(dur, 2), if(i = 0 OR mode_ = 'call', dur, toInt64(dur * (0.8 + 0.2 * ((cityHash64(n, 40 + i) % 1000) / 1000)))))), idx) AS secs,
    arrayMap(s -> intDiv(s * 1000 + 30, 60), secs) AS p_minutes`;
}

/** The fact table's columns (lib/clickhouse/schema.ts CALLS), in order, from the aliases above. */
const FACT_COLUMNS: Array<[string, string]> = [
  ["app_pk", "app_pk"],
  ["session_id", "session_id"],
  ["version", "toUInt64(1)"],
  ["deleted", "toUInt8(0)"],
  ["mid", "mid_"],
  ["type", "type_"],
  ["mode", "mode_"],
  ["status", "status_"],
  ["initiator", "initiator_"],
  ["receiver", "receiver_"],
  ["receiver_type", "if(mode_ = 'call', 'user', 'group')"],
  ["initiated_at", "initiated_at"],
  ["started_at", "if(never, NULL, toNullable(started))"],
  ["ended_at", "ended_at_"],
  ["start_at", "if(never, initiated_at, started)"],
  ["platform_has_recording", `toUInt8(NOT never AND ${u(16)} < 0.3)`],
  ["total_audio_minutes_x1000", "if(type_ = 'audio', arraySum(p_minutes), 0)"],
  ["total_video_minutes_x1000", "if(type_ = 'video', arraySum(p_minutes), 0)"],
  ["total_duration_minutes_x1000", "intDiv(wall * 1000 + 30, 60)"],
  ["duration_seconds", "wall"],
  ["total_participants", "k"],
  ["source", "'sync'"],
  ["content_hash", "lower(hex(cityHash64(n, 17)))"],
  ["raw", `concat('{"sessionId":"', session_id, '","mid":"', mid_, '","type":"', type_, '","mode":"', mode_, '","status":"', status_, '","initiator":"', initiator_, '","receiver":"', receiver_, '","receiverType":"', if(mode_ = 'call', 'user', 'group'), '","initiatedAt":', toString(initiated_at), ',"endedAt":', toString(ended_at_), ',"totalParticipants":', toString(k), '}')`],
  ["first_seen_ms", "(initiated_at + 3600) * 1000"],
  ["updated_ms", "(initiated_at + 3600) * 1000"],
  ["p_seq", "arrayMap(i -> toUInt32(i), idx)"],
  ["p_uid", "uids"],
  ["p_state", "arrayMap(i -> toNullable(if(joined[i + 1] OR (never AND i = 0), 'ended', 'unanswered')), idx)"],
  ["p_is_joined", "arrayMap(j -> toUInt8(j), joined)"],
  ["p_total_audio_minutes_x1000", "arrayMap(m -> if(type_ = 'audio', m, 0), p_minutes)"],
  ["p_total_video_minutes_x1000", "arrayMap(m -> if(type_ = 'video', m, 0), p_minutes)"],
  ["p_total_duration_minutes_x1000", "p_minutes"],
  ["p_device_id", "arrayMap(i -> if(joined[i + 1], toNullable(concat('dev-', lower(hex(cityHash64(n, 60 + i))))), NULL), idx)"],
  ["p_joined_at", "arrayMap(i -> if(joined[i + 1], toNullable(started), NULL), idx)"],
  ["p_left_at", "arrayMap(i -> if(joined[i + 1], toNullable(started + secs[i + 1]), NULL), idx)"],
  ["p_mid", "arrayMap(i -> if(joined[i + 1], toNullable(lower(hex(cityHash64(n, 80 + i)))), NULL), idx)"],
  ["p_raw", "arrayMap(i -> CAST(NULL AS Nullable(String)), idx)"],
  // As a copied warehouse holds it: the SQLite pk (the call's number, from 1).
  ["arrival", "toUInt64(n + 1)"],
];

/**
 * The statement that writes calls [from, from + count) that belong to shard `shard` of
 * `shards` into `table` (the shard's local table): the sharding key of schema.ts's CALLS
 * (cityHash64(app_pk, session_id)) modulo the shard count, as the Distributed table routes.
 */
export function generateCallsSql(table: string, from: number, count: number, shard: number, shards: number): string {
  const cols = FACT_COLUMNS.map(([c]) => `\`${c}\``).join(", ");
  // Every fact column is named inside the subquery; the outer query only picks names
  // (18.16 prunes a subquery's columns without seeing those a lambda captures).
  const named = FACT_COLUMNS.filter(([c, e]) => c !== e).map(([c, e]) => `${e} AS \`${c}\``).join(",\n    ");
  return `INSERT INTO ${table} (${cols})
  SELECT ${cols}
  FROM (SELECT ${callColumns()},\n    ${named} FROM numbers(${from}, ${count}))
  WHERE cityHash64(app_pk, session_id) % ${shards} = ${shard}`;
}

/** Runs one statement on one server of the harness (not through the Distributed table); returns the body. */
export async function onServer(server: { host: string; httpPort: number }, password: string, sql: string): Promise<string> {
  const url = `http://${server.host}:${server.httpPort}/?user=default&password=${encodeURIComponent(password)}`;
  const res = await fetch(url, { method: "POST", body: sql });
  const body = await res.text();
  if (!res.ok) throw new Error(`ClickHouse on ${server.host}: ${body.slice(0, 500)}`);
  return body;
}

/**
 * Writes `calls` generated calls into `database`'s `calls_local` on every shard, a million
 * numbers a statement (bounded memory), then merges each shard's parts (OPTIMIZE … FINAL:
 * a settled warehouse, as a long-lived one is between syncs). Returns the seconds taken.
 */
export async function generateCalls(servers: ReadonlyArray<{ host: string; httpPort: number }>, password: string, database: string, calls: number, log: (line: string) => void): Promise<{ insertSeconds: number; optimizeSeconds: number }> {
  const chunk = 1_000_000;
  const t0 = performance.now();
  for (let from = 0; from < calls; from += chunk) {
    const count = Math.min(chunk, calls - from);
    await Promise.all(servers.map((s, i) => onServer(s, password, generateCallsSql(`\`${database}\`.calls_local`, from, count, i, servers.length))));
    log(`  generated ${(from + count).toLocaleString("en")} / ${calls.toLocaleString("en")} calls (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  }
  const t1 = performance.now();
  await Promise.all(servers.map((s) => onServer(s, password, `OPTIMIZE TABLE \`${database}\`.calls_local FINAL`)));
  return { insertSeconds: (t1 - t0) / 1000, optimizeSeconds: (performance.now() - t1) / 1000 };
}
