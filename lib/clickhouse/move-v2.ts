import { randomUUID } from "node:crypto";
import type { ClickHouseConfig } from "./config";
import { openClickHouse, type ClickHouse } from "./client";
import { clusterHosts, reachAllClusterHosts } from "./cluster-hosts";
import { bounded, DEFAULT_LEASE_TIMING, MoveLease, moveLeaseStatement, MoveStalledError, type LeaseTiming } from "./move-v2-guards";
import { CALLS, RECORDINGS, localName, qualified, quoteIdentifier, type Placement } from "./schema";
import {
  CALL_RAW, CALLS_BY_BUCKET, CALLS_BY_MONTH, CALLS_V2, CLOSED_SETS, enumType, CONCURRENCY_BY_QUARTER, PARTICIPANTS_BY_MONTH, PARTICIPANTS_BY_MONTH_DIMS, PARTICIPANTS_V2, SESSION_CODE_SQL, UID_CODE_SQL, UIDS,
  type ClosedSet,
} from "./schema-v2";

/**
 * The move of a v1 warehouse (schema.ts `calls`, one row per call version, participants
 * as arrays) to schema v2 (schema-v2.ts): run by `npm run db:migrate` after the migrations
 * (issue 25 item 3; docs/decisions/0034-clickhouse-schema-v2.md).
 *
 * Every server reads its own v1 rows (`calls FINAL` on its local table, tombstones left
 * out) and inserts them, by INSERT … SELECT on the server itself, into v2's Distributed
 * tables, which route each row to the shard the v2 writers use (schema-v2.ts
 * SHARD_BY_CALL: v1's own key, so a call stays on its server unless the weights changed). The insert
 * is synchronous (`insert_distributed_sync`): it returns once every shard has its rows,
 * and the views have filled each shard's pre-aggregates. The live state of each call is
 * written once with sign +1 (its v1 version kept), its participants by ARRAY JOIN (uids
 * and the session coded as every writer codes them), its `call_raw` row (v1's columns, no
 * state replaced), so that the writers' next change of a moved call finds it by key and
 * writes its cancel rows (writer-v2.ts).
 *
 * One start month at a time over the whole warehouse, every step idempotent, so that a
 * move killed at any point and run again ends exactly right:
 *   1. drop the month on every shard from every table its rows feed (the signed rows and
 *      the three pre-aggregates: all partitioned by start month), so a month half written
 *      by a killed run is rewritten whole, never added to;
 *   2. every server writes its month's calls, participants, raw records and uid codes
 *      (the last two are ReplacingMergeTree by key: written twice, they collapse);
 *   3. check the counts: v1's live calls and participants of the month against v2's
 *      `sum(sign)` in the rows and in the monthly pre-aggregate, over every shard; a
 *      difference stops the move with both numbers (nothing is checkpointed);
 *   4. record the month in every server's `v2_move_checkpoints`: a later run skips a month
 *      every server has recorded.
 *
 * One run moves at a time (a lease in the warehouse), and no statement of the move waits
 * longer than its bound (`statementTimeoutMs`, CLICKHOUSE_MOVE_STATEMENT_TIMEOUT_SECONDS):
 * move-v2-guards.ts says why (two movers at once deadlock 18.16 for good).
 *
 * The move writes only +1 rows and drops months whole: it is meant for a warehouse whose
 * v2 tables only the move has written (`npm run db:migrate` before the servers start
 * writing v2). A month already checkpointed is never touched again, and a warehouse with
 * no v1 calls (new, or written in v2 from the start) has nothing to move.
 */

export const MOVE_CHECKPOINTS_TABLE = "v2_move_checkpoints";

/** The checkpoints of the move on one server (a plain local table: each host moves its own rows). */
export function moveCheckpointsStatement(p: Placement, onCluster = false): string {
  const on = onCluster && p.cluster ? ` ON CLUSTER ${quoteIdentifier(p.cluster)}` : "";
  return `CREATE TABLE IF NOT EXISTS ${qualified(p.database, MOVE_CHECKPOINTS_TABLE)}${on} (month UInt32, calls UInt64, participants UInt64, done_ms UInt64) ENGINE = MergeTree ORDER BY month`;
}

/** A closed set's v1 text as v2's code (schema-v2.ts encodeClosed, in SQL). */
function closedCode(set: ClosedSet): string {
  const known = `[${CLOSED_SETS[set].map((v) => `'${v}'`).join(", ")}]`;
  return `CAST(multiIf(isNull(${set}), 'unset', has(${known}, assumeNotNull(${set})), assumeNotNull(${set}), 'other') AS ${enumType(set)})`;
}

function closedOther(set: ClosedSet): string {
  const known = `[${CLOSED_SETS[set].map((v) => `'${v}'`).join(", ")}]`;
  return `if(isNull(${set}) OR has(${known}, assumeNotNull(${set})), '', assumeNotNull(${set}))`;
}

const CLOSED_SOURCES = Object.fromEntries(
  (Object.keys(CLOSED_SETS) as ClosedSet[]).flatMap((set) => [[set, closedCode(set)], [`${set}_other`, closedOther(set)]]),
);

/**
 * Where each v2 column comes from in a v1 row. The INSERTs are built from the specs'
 * columns, so a column the specs gain without a source here fails the move (and its
 * test) by name instead of writing a default.
 */
const CALL_SOURCES: Record<string, string> = {
  sign: "toInt8(1)",
  version: "version",
  app_pk: "app_pk",
  start_at: "toDateTime(start_at)",
  session_id: "session_id",
  ...CLOSED_SOURCES,
  platform_has_recording: "platform_has_recording",
  total_audio_minutes_x1000: "total_audio_minutes_x1000",
  total_video_minutes_x1000: "total_video_minutes_x1000",
  total_duration_minutes_x1000: "total_duration_minutes_x1000",
  duration_seconds: "duration_seconds",
  total_participants: "total_participants",
  initiated_at: "initiated_at",
  started_at: "started_at",
  ended_at: "ended_at",
  initiator: "initiator",
  receiver: "receiver",
  arrival: "arrival",
};

/**
 * `has_link`: a link of the call among the server's own recordings (`recordings` is
 * co-sharded with v1's calls, and each server moves its own v1 rows).
 */
const hasLinkSource = (recordings: string): string => `toUInt8((app_pk, session_id) IN (SELECT app_pk, session_id FROM ${recordings} FINAL WHERE deleted = 0))`;

/** Per participant, after `ARRAY JOIN` of the v1 arrays as `a_<field>` (PARTICIPANT_ARRAYS). */
const PARTICIPANT_SOURCES: Record<string, string> = {
  sign: "toInt8(1)",
  version: "version",
  app_pk: "app_pk",
  start_at: "toDateTime(start_at)",
  session_code: SESSION_CODE_SQL("session_id"),
  seq: "a_seq",
  uid_code: UID_CODE_SQL("a_uid"),
  first_of_uid: "toUInt8(a_occ = 1)",
  is_joined: "a_is_joined",
  is_unanswered: "toUInt8(ifNull(a_state = 'unanswered', 0))",
  total_audio_minutes_x1000: "a_audio",
  total_video_minutes_x1000: "a_video",
  total_duration_minutes_x1000: "a_total",
  // A uid's first joined / unanswered row of the call (rows-v2.ts participantRows): the first occurrence of (uid, flag) with the flag set.
  first_joined_of_uid: "toUInt8(a_is_joined = 1 AND a_occ_joined = 1)",
  first_unanswered_of_uid: "toUInt8(ifNull(a_state = 'unanswered', 0) AND a_occ_unanswered = 1)",
  ...CLOSED_SOURCES,
  total_participants: "total_participants",
};

const PARTICIPANT_ARRAYS = `p_seq AS a_seq, p_uid AS a_uid, arrayEnumerateUniq(p_uid) AS a_occ, p_is_joined AS a_is_joined,
  arrayEnumerateUniq(p_uid, p_is_joined) AS a_occ_joined, arrayEnumerateUniq(p_uid, arrayMap(s -> ifNull(s = 'unanswered', 0), p_state)) AS a_occ_unanswered,
  p_total_audio_minutes_x1000 AS a_audio, p_total_video_minutes_x1000 AS a_video, p_total_duration_minutes_x1000 AS a_total,
  p_state AS a_state`;

function selectList(columns: ReadonlyArray<readonly [string, string]>, sources: Record<string, string>, table: string): { names: string; exprs: string } {
  const missing = columns.filter(([n]) => !(n in sources)).map(([n]) => n);
  if (missing.length > 0) throw new Error(`the move to v2 has no v1 source for ${table}.${missing.join(", ")} (lib/clickhouse/move-v2.ts)`);
  return { names: columns.map(([n]) => quoteIdentifier(n)).join(", "), exprs: columns.map(([n]) => `${sources[n]} AS ${quoteIdentifier(`v_${n}`)}`).join(", ") };
}

/** The tables a month of v2 rows is in (each partitioned by start month): dropped before the month is written. */
const MONTH_TABLES = [CALLS_V2, PARTICIPANTS_V2, CALLS_BY_BUCKET, CALLS_BY_MONTH, PARTICIPANTS_BY_MONTH, PARTICIPANTS_BY_MONTH_DIMS, CONCURRENCY_BY_QUARTER];

/**
 * The statements of moving month `m`: `drop` on every server (its local tables), `write`
 * on every server (from its local v1 rows into v2's Distributed tables, or the tables
 * themselves on a single server).
 */
export function moveStatements(p: Placement, month: number): { drop: string[]; write: string[] } {
  const local = (name: string) => qualified(p.database, localName(p, name));
  const routed = (name: string) => qualified(p.database, name);
  const v1 = local(CALLS.name);
  const inMonth = `deleted = 0 AND toYYYYMM(toDateTime(start_at)) = ${month}`;
  const hasLink = hasLinkSource(local(RECORDINGS.name));
  const calls = selectList(CALLS_V2.columns, { ...CALL_SOURCES, has_link: hasLink }, CALLS_V2.name);
  const participants = selectList(PARTICIPANTS_V2.columns, PARTICIPANT_SOURCES, PARTICIPANTS_V2.name);
  // call_raw is v1's columns, the state replaced (none: '') and the link flag.
  const v1Columns = CALLS.columns.map(([n]) => quoteIdentifier(n)).join(", ");
  return {
    drop: MONTH_TABLES.map((table) => `ALTER TABLE ${local(table.name)} DROP PARTITION ${month}`),
    write: [
      `INSERT INTO ${routed(CALLS_V2.name)} (${calls.names}) SELECT ${calls.exprs} FROM ${v1} FINAL WHERE ${inMonth}`,
      `INSERT INTO ${routed(PARTICIPANTS_V2.name)} (${participants.names}) SELECT ${participants.exprs} FROM ${v1} FINAL ARRAY JOIN ${PARTICIPANT_ARRAYS} WHERE ${inMonth}`,
      `INSERT INTO ${routed(CALL_RAW.name)} (${v1Columns}, previous, has_link) SELECT ${v1Columns}, '', ${hasLink} FROM ${v1} FINAL WHERE ${inMonth}`,
      `INSERT INTO ${routed(UIDS.name)} (app_pk, uid_code, uid) SELECT app_pk, ${UID_CODE_SQL("a_uid")}, a_uid FROM ${v1} FINAL ARRAY JOIN arrayDistinct(p_uid) AS a_uid WHERE ${inMonth}`,
    ],
  };
}

/** Where a move stands: reported after each step of each month. */
export interface MoveProgress {
  /** The warehouse moved (its redacted address). */
  host: string;
  month: number;
  step: "dropped" | "written" | "checked";
  /** Months done (checkpointed) so far, and in all. */
  monthsDone: number;
  monthsTotal: number;
  /** Live calls of the month (known once written). */
  calls?: number;
}

export interface MovedMonth {
  host: string;
  month: number;
  calls: number;
  participants: number;
}

export interface MoveReport {
  hosts: string[];
  /** Months moved by this run (checkpointed). */
  moved: MovedMonth[];
  /** Months skipped: checkpointed by an earlier run. */
  skipped: number;
}

/** A month whose v2 counts differ from v1's after it was written: nothing is checkpointed. */
export class MoveMismatchError extends Error {
  constructor(
    readonly host: string,
    readonly month: number,
    readonly counts: Record<string, number>,
  ) {
    super(`the move to v2 of month ${month} on ${host} does not add up: ${JSON.stringify(counts)}; run npm run db:migrate again (the month is rewritten whole)`);
    this.name = "MoveMismatchError";
  }
}

export interface MoveOptions {
  /** Called after each step (a callback that throws stops the move there, as a crash would). */
  onProgress?: (p: MoveProgress) => void;
  /** The most one statement of the move may take, ms (default 10 min); past it the move stops with MoveStalledError. */
  statementTimeoutMs?: number;
  /** The lease's length and settling pause (tests shorten them). */
  leaseTiming?: LeaseTiming;
}

export const DEFAULT_MOVE_STATEMENT_TIMEOUT_MS = 600_000;

const n = (v: unknown) => Number(v ?? 0);

/** An INSERT into a Distributed table returns once every shard holds its rows (18.16 queues them otherwise). */
const SYNC_INSERT = { insert_distributed_sync: 1 };

/**
 * The query ids of the move's writes start with this. An INSERT … SELECT runs on the
 * server: a `db:migrate` killed while one runs leaves it running there, and it would add
 * its rows to the month the next run has just dropped. So a run first kills, and waits
 * out, every move write still running on any server (and the parts a Distributed insert
 * sent on to the other shards, which carry its id as their initial query's).
 */
const MOVE_QUERY = "callboard-move-v2-";

async function stopEarlierMoves(servers: readonly ClickHouse[], timeoutMs: number): Promise<void> {
  const earlier = `(query_id LIKE '${MOVE_QUERY}%' OR initial_query_id LIKE '${MOVE_QUERY}%')`;
  for (const server of servers) {
    // ASYNC and a bounded wait, not SYNC: KILL … SYNC waits as long as the query does, and on
    // 18.16 a query waiting for a table lock never ends (move-v2-guards.ts).
    const kill = `KILL QUERY WHERE ${earlier} ASYNC`;
    await bounded(server, kill, `callboard-move-kill-${randomUUID()}`, timeoutMs, () => server.command(kill));
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const look = `SELECT query_id FROM system.processes WHERE ${earlier}`;
      const left = await bounded(server, look, `callboard-move-look-${randomUUID()}`, timeoutMs, () => server.rows<{ query_id: string }>(look));
      if (left.length === 0) break;
      if (Date.now() > deadline) throw new MoveStalledError(server.label, "the writes of an earlier, killed move (asked to stop)", left.map((r) => r.query_id), timeoutMs);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/**
 * Moves a warehouse's v1 rows month by month; resumes after its checkpoints. `servers`:
 * every server of the cluster (each reads its own v1 rows), or the one server; `label`
 * names the warehouse in progress and errors.
 */
export async function moveServersToV2(servers: readonly ClickHouse[], p: Placement, label: string, options: MoveOptions = {}): Promise<{ moved: MovedMonth[]; skipped: number }> {
  const timeoutMs = options.statementTimeoutMs ?? DEFAULT_MOVE_STATEMENT_TIMEOUT_MS;
  /** Every statement of the move has an id (its writes the MOVE_QUERY prefix) and a bound. */
  const exec = (server: ClickHouse, statement: string, settings?: Record<string, number>) => {
    const id = `${MOVE_QUERY}${randomUUID()}`;
    return bounded(server, statement, id, timeoutMs, () => server.command(statement, settings, id));
  };
  const read = <T>(server: ClickHouse, statement: string) => {
    const id = `callboard-move-read-${randomUUID()}`;
    return bounded(server, statement, id, timeoutMs, () => server.rows<T>(statement, undefined, id));
  };
  // Nothing to move (a new warehouse, or one moved already): no lease, no wait.
  const planned = await plan(servers, p, read);
  if (planned.pending.length === 0) return { moved: [], skipped: planned.all.length };
  const [first] = servers;
  await exec(first, moveLeaseStatement(p));
  const lease = new MoveLease(first, p, label, options.leaseTiming ?? DEFAULT_LEASE_TIMING, (statement, run) => {
    const id = `callboard-move-lease-${randomUUID()}`;
    return bounded(first, statement, id, timeoutMs, () => run(id));
  });
  await lease.acquire();
  try {
    return await moveMonths(servers, p, label, options, { exec, read, lease, timeoutMs });
  } finally {
    await lease.release();
  }
}

interface MoveRun {
  exec: (server: ClickHouse, statement: string, settings?: Record<string, number>) => Promise<void>;
  read: <T>(server: ClickHouse, statement: string) => Promise<T[]>;
  lease: MoveLease;
  timeoutMs: number;
}

/** Every start month any stored version has, on any server, and those not yet checkpointed by every server. */
async function plan(servers: readonly ClickHouse[], p: Placement, read: MoveRun["read"]): Promise<{ all: number[]; pending: number[] }> {
  const local = (name: string) => qualified(p.database, localName(p, name));
  const checkpoints = qualified(p.database, MOVE_CHECKPOINTS_TABLE);
  // A month whose calls all moved away or were deleted is written empty (dropped).
  const months = new Set<number>();
  let done: Set<number> | undefined;
  for (const server of servers) {
    for (const r of await read<{ m: number }>(server, `SELECT DISTINCT toYYYYMM(toDateTime(start_at)) AS m FROM ${local(CALLS.name)}`)) months.add(n(r.m));
    const here = new Set((await read<{ month: number }>(server, `SELECT DISTINCT month FROM ${checkpoints}`)).map((r) => n(r.month)));
    // A month is done once every server recorded it (a run killed while recording does it again).
    done = done === undefined ? here : new Set([...done].filter((m) => here.has(m)));
  }
  const all = [...months].sort((a, b) => a - b);
  return { all, pending: all.filter((m) => !done?.has(m)) };
}

async function moveMonths(servers: readonly ClickHouse[], p: Placement, label: string, options: MoveOptions, { exec, read, lease, timeoutMs }: MoveRun): Promise<{ moved: MovedMonth[]; skipped: number }> {
  const routed = (name: string) => qualified(p.database, name);
  const checkpoints = qualified(p.database, MOVE_CHECKPOINTS_TABLE);
  // Planned again under the lease: an earlier run may have moved months meanwhile.
  const { all, pending } = await plan(servers, p, read);
  let monthsDone = all.length - pending.length;
  const moved: MovedMonth[] = [];
  const report = (month: number, step: MoveProgress["step"], calls?: number) =>
    options.onProgress?.({ host: label, month, step, monthsDone, monthsTotal: all.length, calls });
  const [first] = servers;
  if (pending.length > 0) await stopEarlierMoves(servers, timeoutMs);
  for (const month of pending) {
    await lease.check();
    const { drop, write } = moveStatements(p, month);
    for (const server of servers) for (const s of drop) await exec(server, s);
    report(month, "dropped");
    for (const server of servers) for (const s of write) await exec(server, s, p.cluster ? SYNC_INSERT : undefined);
    const [want] = await read<{ calls: number; participants: number }>(first, 
      `SELECT count() AS calls, sum(length(p_uid)) AS participants FROM ${routed(CALLS.name)} FINAL WHERE deleted = 0 AND toYYYYMM(toDateTime(start_at)) = ${month}`,
    );
    report(month, "written", n(want?.calls));
    const [rows] = await read<{ calls: number }>(first, `SELECT sum(sign) AS calls FROM ${routed(CALLS_V2.name)} WHERE toYYYYMM(start_at) = ${month}`);
    const [parts] = await read<{ participants: number }>(first, `SELECT sum(sign) AS participants FROM ${routed(PARTICIPANTS_V2.name)} WHERE toYYYYMM(start_at) = ${month}`);
    const [agg] = await read<{ calls: number }>(first, `SELECT sum(calls) AS calls FROM ${routed(CALLS_BY_MONTH.name)} WHERE toYYYYMM(month) = ${month}`);
    const counts = { v1Calls: n(want?.calls), v2Calls: n(rows?.calls), v2MonthlyCalls: n(agg?.calls), v1Participants: n(want?.participants), v2Participants: n(parts?.participants) };
    if (counts.v1Calls !== counts.v2Calls || counts.v1Calls !== counts.v2MonthlyCalls || counts.v1Participants !== counts.v2Participants) throw new MoveMismatchError(label, month, counts);
    for (const server of servers) {
      await exec(server, `INSERT INTO ${checkpoints} (month, calls, participants, done_ms) VALUES (${month}, ${counts.v1Calls}, ${counts.v1Participants}, ${Date.now()})`);
    }
    monthsDone++;
    moved.push({ host: label, month, calls: counts.v1Calls, participants: counts.v1Participants });
    report(month, "checked", counts.v1Calls);
  }
  return { moved, skipped: all.length - pending.length };
}

/** Moves the ClickHouse named by the configuration (every server of its cluster) to v2; migrated first. */
export async function moveToV2(c: ClickHouseConfig, options: MoveOptions = {}): Promise<MoveReport> {
  const p: Placement = { database: c.database, cluster: c.cluster };
  // The clients' own request timeout comes after the move's bound, so a stalled statement ends in MoveStalledError (server and query named).
  const open = { requestTimeoutMs: (options.statementTimeoutMs ?? DEFAULT_MOVE_STATEMENT_TIMEOUT_MS) + 60_000 };
  const boot = openClickHouse(c, { noDatabase: true, ...open });
  try {
    if (!c.cluster) return { hosts: [c.redacted], ...(await moveServersToV2([boot], p, c.redacted, options)) };
    const reached = await reachAllClusterHosts(c, c.cluster, await clusterHosts(boot, c.cluster), open);
    try {
      const hosts = reached.map((r) => r.config.redacted);
      return { hosts, ...(await moveServersToV2(reached.map((r) => r.client), p, c.redacted, options)) };
    } finally {
      await Promise.all(reached.map((r) => r.client.close()));
    }
  } finally {
    await boot.close();
  }
}
