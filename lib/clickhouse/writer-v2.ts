import { Readable } from "node:stream";
import { clickhouse, clickHouseConfig, openClickHouse, whenClickHouseCloses, type ClickHouse } from "./client";
import { reachClusterHost, type ClusterHost } from "./cluster-hosts";
import type { ClickHouseConfig } from "./config";
import { callRawRow, changeRowsV2, stateOfCallRaw, type CallRawRead, type CallStateV2, type CodesV2 } from "./rows-v2";
import { localName, qualified, quoteIdentifier, RECORDINGS } from "./schema";
import { CALLS_V2, CALL_RAW, PARTICIPANTS_V2, SESSION_CODE_SQL, UID_CODE_SQL, UIDS, callShardSql } from "./schema-v2";
import { raw, sql, stringLiteral } from "./sql";

/**
 * The one writer of schema v2's call facts (schema-v2.ts), shared by the sync, the copy
 * and anything else that changes a call: it finds the state each change replaces, writes
 * that state's cancel rows and the new state, and lands every change exactly once, even
 * when the process is killed between any two of its inserts or an insert that timed out
 * had in fact landed. Design: docs/decisions/0034-clickhouse-schema-v2.md, "Writers".
 *
 * A batch of changes of one app, per shard, in this order:
 * 1. **Look up** each key's newest `call_raw` row (the by-key side, ordered by
 *    (app_pk, session_id): a read of a few granules per key, no FINAL over the table).
 * 2. **Verify** each found state: did its own signed rows land? Each change is written as
 *    one block per table per shard, so one row of it proves all of it: the writer asks each
 *    shard for a probe row of each change (its +1 row, or for a delete the cancel row) by
 *    primary key. A change whose rows are missing from a table (its writer was killed
 *    after step 3) is completed now, from the `state` and `previous` its call_raw row kept.
 * 3. **uids** of the new states (ReplacingMergeTree: a repeat collapses), so that a code
 *    is never read before its uid is there.
 * 4. **Record the intent**: the new states' call_raw rows (state, the state replaced, raw).
 * 5. **Signed rows**: calls_v2 (the cancel rows of the replaced states, then the new
 *    states), then participants_v2, each one block into the shard's local table (one insert:
 *    atomic, and the views' pre-aggregates are fed from that same block).
 *
 * An insert that fails (a timeout, a dropped connection) is retried only after asking the
 * shard whether its probe row is there: an insert that landed is never sent twice.
 * 18.16 does not deduplicate retried inserts into non-replicated tables, hence all this.
 *
 * One writer per app at a time (the sync's lease; the copy runs alone): two writers
 * changing the same call at once could both cancel the same state.
 */

/** One change of a call: its new state, or a delete (`next` undefined). */
export interface CallChangeV2 {
  sessionId: string;
  /** The new state's version: above every version written of this call, or the change is a replay and skipped. */
  version: number;
  next: CallStateV2 | undefined;
  /** The platform's record as received (call_raw.raw). */
  raw?: string | null;
  /**
   * A new state, never a replay (the sync: its version is its clock): one not above the
   * stored version (a clock behind the writer before) is written one above it instead of skipped.
   */
  raiseVersion?: boolean;
}

/** A call's newest call_raw row, as the writer (and the sync) needs it. */
export interface StoredCallV2 {
  sessionId: string;
  version: number;
  deleted: boolean;
  source: string;
  contentHash: string | null;
  status: string | null;
  firstSeenMs: number;
  arrival: number;
  state: CallStateV2 | undefined;
  previous: CallStateV2 | undefined;
  /** Its signed rows are known to be in every table (checked, or written by this process). */
  verified: boolean;
}

export interface WriteResultV2 {
  /** Changes written (replays and deletes of unknown calls are skipped). */
  written: number;
  /** Changes found stored but not landed whole, completed before this batch. */
  completed: number;
  /** The newest stored row of every key the batch touched, after it. */
  stored: Map<string, StoredCallV2 | undefined>;
}

/** Where the writer is between inserts: what the kill tests stop it at. */
export type WriteStepV2 = "looked-up" | "uids" | "raw" | "calls" | "participants" | "done";

/** One shard: a client whose database is the warehouse's, inserting into the local tables. */
export interface ShardV2 {
  client: ClickHouse;
  weight: number;
}

export interface WriterV2Options {
  /** Called before each step on each shard (`shard` -1: the batch's own steps); the kill tests stop the process here. */
  onStep?: (step: WriteStepV2, shard: number) => void | Promise<void>;
  /** Attempts of one insert before it fails the batch (default 4). */
  attempts?: number;
  /** First pause between attempts, doubled each time (default 200 ms). */
  retryMs?: number;
}

/** Most text a query's literal lists carry: 18.16 parses at most 256 kB of query text (max_query_size). */
const PIECE_BYTES = 160_000;

/** `list` in pieces whose literals fit one query (strings by their length, anything else as a probe row of ~120 bytes). */
function pieces<T>(list: readonly T[]): T[][] {
  const out: T[][] = [];
  let piece: T[] = [];
  let bytes = 0;
  for (const x of list) {
    const size = typeof x === "string" ? 8 + 2 * x.length : 120;
    if (piece.length > 0 && bytes + size > PIECE_BYTES) {
      out.push(piece);
      piece = [];
      bytes = 0;
    }
    piece.push(x);
    bytes += size;
  }
  if (piece.length > 0) out.push(piece);
  return out;
}

/**
 * The shards of the warehouse as the Distributed tables have them (system.clusters, in
 * shard order, each with its weight), each reached over HTTP at its first replica (the
 * v2 tables are not replicated). One server: itself. The caller closes them.
 */
export async function openShardsV2(ch: ClickHouse, config: ClickHouseConfig): Promise<ShardV2[]> {
  const cluster = config.cluster;
  if (!cluster) return [{ client: ch, weight: 1 }];
  const rows = await ch.rows<{ shard_num: number; shard_weight: number; host_name: string; port: number }>(
    sql`SELECT shard_num, shard_weight, host_name, port FROM system.clusters WHERE cluster = ${cluster} AND replica_num = 1 ORDER BY shard_num`.text,
  );
  if (rows.length === 0) throw new Error(`ClickHouse cluster "${cluster}" lists no shard (system.clusters)`);
  const shards: ShardV2[] = [];
  try {
    for (const r of rows) {
      const host: ClusterHost = { shard: Number(r.shard_num), replica: 1, host: r.host_name, tcpPort: Number(r.port) };
      const reached = await reachClusterHost(config, cluster, host);
      await reached.client.close(); // it has no database selected; ours does
      shards.push({ client: openClickHouse(reached.config), weight: Number(r.shard_weight) || 1 });
    }
    return shards;
  } catch (err) {
    await Promise.all(shards.map((s) => s.client.close()));
    throw err;
  }
}

/** call_raw's columns a lookup reads: all but the raw record (what one call's page alone needs). */
const LOOKUP_COLUMNS = CALL_RAW.columns.map(([name]) => name).filter((name) => name !== "raw");

/** The codes of a batch, and the shard of each session (the Distributed tables' SHARD_BY_CALL). */
interface BatchCodes extends CodesV2 {
  shardOf(sessionId: string): number;
}

/** The signed rows of one change, per table, with the row that proves each block landed. */
interface ChangeRows {
  shard: number;
  calls: Array<Record<string, unknown>>;
  participants: Array<Record<string, unknown>>;
  uids: Array<Record<string, unknown>>;
}

export class CallWriterV2 {
  private readonly attempts: number;
  private readonly retryMs: number;
  private readonly totalWeight: number;

  constructor(
    /** The warehouse's client (Distributed tables: lookups, codes, uids). */
    private readonly ch: ClickHouse,
    /** Each shard's client, in shard order (openShardsV2). */
    private readonly shards: readonly ShardV2[],
    private readonly options: WriterV2Options = {},
  ) {
    this.attempts = options.attempts ?? 4;
    this.retryMs = options.retryMs ?? 200;
    this.totalWeight = shards.reduce((n, s) => n + s.weight, 0);
  }

  private local(table: string): string {
    return localName(this.ch.placement, table);
  }

  private table(name: string) {
    return raw(qualified(this.ch.placement.database, name));
  }

  /** Each key's newest call_raw row (undefined: never written), not yet verified. */
  async lookup(appPk: number, sessionIds: readonly string[]): Promise<Map<string, StoredCallV2 | undefined>> {
    const out = new Map<string, StoredCallV2 | undefined>();
    for (const id of sessionIds) out.set(id, undefined);
    const found = await Promise.all(
      pieces([...new Set(sessionIds)]).map((ids) =>
        this.ch.rows<CallRawRead>(
          sql`SELECT ${raw(LOOKUP_COLUMNS.map(quoteIdentifier).join(", "))} FROM ${this.table(CALL_RAW.name)} WHERE app_pk = ${appPk} AND session_id IN ${ids}`.text,
        ),
      ),
    );
    for (const r of found.flat()) {
      const id = String(r.session_id);
      const have = out.get(id);
      if (have && have.version >= Number(r.version)) continue;
      out.set(id, {
        sessionId: id, version: Number(r.version), deleted: Number(r.deleted) === 1, source: String(r.source), contentHash: (r.content_hash as string | null) ?? null,
        status: (r.status as string | null) ?? null, firstSeenMs: Number(r.first_seen_ms), arrival: Number(r.arrival), state: stateOfCallRaw(r),
        previous: r.previous ? (JSON.parse(String(r.previous)) as CallStateV2) : undefined, verified: false,
      });
    }
    return out;
  }

  /**
   * The keys among `sessionIds` with a recording link stored (`recordings`, co-sharded:
   * FINAL per shard over the keys' granules). Under the app's lease (the sync, the
   * forwarder's link-flag pass) or alone (the copy), so a link stored after this read
   * is flagged by the pass that follows its storing (link-flags.ts).
   */
  private async linked(appPk: number, sessionIds: readonly string[]): Promise<Set<string>> {
    const out = new Set<string>();
    const found = await Promise.all(
      pieces([...new Set(sessionIds)]).map((ids) =>
        this.ch.rows<{ id: string }>(
          sql`SELECT DISTINCT session_id AS id FROM ${this.table(RECORDINGS.name)} FINAL WHERE app_pk = ${appPk} AND session_id IN ${ids} AND deleted = 0`.text,
        ),
      ),
    );
    for (const r of found.flat()) out.add(String(r.id));
    return out;
  }

  /** Uid and session codes, and each session's shard, asked of the server (the same hash every writer and the Distributed tables use). */
  private async codes(appPk: number, sessionIds: readonly string[], uids: readonly string[]): Promise<BatchCodes> {
    const sessions = new Map<string, { code: string; slot: number }>();
    const uidCodes = new Map<string, string>();
    const weight = this.totalWeight;
    await Promise.all([
      ...pieces([...new Set(sessionIds)]).map(async (ids) => {
        const rows = await this.ch.rows<{ k: string; code: string; slot: number }>(
          `SELECT k, toString(${SESSION_CODE_SQL("k")}) AS code, ${callShardSql(`toUInt32(${appPk})`, "k")} % ${weight} AS slot FROM (SELECT arrayJoin([${ids.map(stringLiteral).join(", ")}]) AS k)`,
        );
        for (const r of rows) sessions.set(r.k, { code: r.code, slot: Number(r.slot) });
      }),
      ...pieces([...new Set(uids)]).map(async (list) => {
        const rows = await this.ch.rows<{ k: string; code: string }>(`SELECT k, toString(${UID_CODE_SQL("k")}) AS code FROM (SELECT arrayJoin([${list.map(stringLiteral).join(", ")}]) AS k)`);
        for (const r of rows) uidCodes.set(r.k, r.code);
      }),
    ]);
    const shardOfSlot: number[] = [];
    this.shards.forEach((s, i) => {
      for (let w = 0; w < s.weight; w++) shardOfSlot.push(i);
    });
    const need = <V>(m: Map<string, V>, k: string, what: string): V => {
      const v = m.get(k);
      if (v === undefined) throw new Error(`no ${what} code for ${JSON.stringify(k)}`);
      return v;
    };
    return {
      uid: (uid) => need(uidCodes, uid, "uid"),
      session: (id) => need(sessions, id, "session").code,
      shardOf: (id) => shardOfSlot[need(sessions, id, "session").slot],
    };
  }

  /** A stored state's own change (previous → state) as signed rows, per table. */
  private rowsOf(s: StoredCallV2, codes: BatchCodes): ChangeRows {
    const r = changeRowsV2(s.previous, s.deleted ? undefined : s.state, codes);
    return { shard: codes.shardOf(s.sessionId), ...r };
  }

  /**
   * Step 2: every stored state whose signed rows are not all in their tables (its writer
   * stopped between step 3 and the end of step 4) is completed, table by table.
   */
  private async verify(appPk: number, stored: readonly StoredCallV2[], codes: BatchCodes): Promise<number> {
    const unverified = stored.filter((s) => !s.verified);
    if (unverified.length === 0) return 0;
    const changes = unverified.map((s) => ({ s, rows: this.rowsOf(s, codes) }));
    const completed = new Set<StoredCallV2>();
    await Promise.all(
      this.shards.map(async (_, shard) => {
        const here = changes.filter((c) => c.rows.shard === shard);
        for (const table of [CALLS_V2, PARTICIPANTS_V2] as const) {
          const rowsOf = (c: (typeof here)[number]) => (table === CALLS_V2 ? c.rows.calls : c.rows.participants);
          const withRows = here.filter((c) => rowsOf(c).length > 0);
          if (withRows.length === 0) continue;
          // Its last row there: all of it is (what landed of a block is a prefix of its rows).
          const present = await this.present(shard, appPk, table.name, withRows.map((c) => rowsOf(c).at(-1)!));
          const missing = withRows.filter((c) => !present.has(probeKey(table.name, rowsOf(c).at(-1)!)));
          if (missing.length === 0) continue;
          for (const c of missing) completed.add(c.s);
          await this.insertOnce(shard, appPk, table.name, await this.absent(shard, appPk, table.name, missing.flatMap(rowsOf)));
        }
      }),
    );
    for (const s of unverified) s.verified = true;
    return completed.size;
  }

  /** The rows of `rows` not on `shard` (a block cut short by a dying writer landed as a prefix of its rows). */
  private async absent(shard: number, appPk: number, table: string, rows: ReadonlyArray<Record<string, unknown>>): Promise<Array<Record<string, unknown>>> {
    const present = await this.present(shard, appPk, table, rows);
    return rows.filter((r) => !present.has(probeKey(table, r)));
  }

  /** Which of `probes` (rows of `table`) are on `shard`: one read by primary key per piece. */
  private async present(shard: number, appPk: number, table: string, probes: ReadonlyArray<Record<string, unknown>>): Promise<Set<string>> {
    const found = new Set<string>();
    const target = this.table(this.local(table));
    const codeColumn = table === CALLS_V2.name ? "session_id" : "session_code";
    const isCalls = table === CALLS_V2.name;
    for (const list of pieces(probes)) {
      const at = (p: Record<string, unknown>) => `toDateTime(${Number(p.start_at)})`;
      const code = (p: Record<string, unknown>) => (isCalls ? stringLiteral(String(p.session_id)) : `toUInt64(${stringLiteral(String(p.session_code))})`);
      // The key's prefix narrows the read to the probes' granules; the whole tuple picks the rows.
      const keys = list.map((p) => `(${at(p)}, ${code(p)})`).join(", ");
      const exact = list.map((p) => `(${at(p)}, ${code(p)}, ${isCalls ? "" : `toUInt32(${Number(p.seq)}), `}toUInt64(${Number(p.version)}), toInt8(${Number(p.sign)}))`).join(", ");
      const rows = await this.shards[shard].client.rows<Record<string, unknown>>(
        // Aliases of their own: an alias named as a column would replace that column in WHERE too.
        `SELECT toUInt32(start_at) AS at, ${isCalls ? "session_id AS code" : "toString(session_code) AS code, seq AS n"}, version AS v, sign AS s
         FROM ${target.text} WHERE app_pk = ${appPk} AND (start_at, ${codeColumn}) IN (${keys})
           AND (start_at, ${codeColumn}, ${isCalls ? "" : "seq, "}version, sign) IN (${exact})`,
      );
      for (const r of rows) found.add(probeKey(table, { start_at: r.at, session_id: r.code, session_code: r.code, seq: r.n, version: r.v, sign: r.s }));
    }
    return found;
  }

  /**
   * One block into a shard's local table. A failed attempt is retried only if its first
   * row (the probe: every row of a block lands, or none) is not on the shard.
   */
  private async insertOnce(shard: number, appPk: number, table: string, rows: ReadonlyArray<Record<string, unknown>>): Promise<void> {
    const client = this.shards[shard].client;
    let left = rows;
    let tries = 0;
    const pause = () => new Promise((r) => setTimeout(r, this.retryMs * 2 ** Math.min(tries - 1, 6)));
    while (left.length > 0) {
      try {
        tries++;
        // One buffer, not a stream of rows: a body cut short by a dying process mostly ends mid-row and fails whole.
        const body = Buffer.from(left.map((r) => JSON.stringify(r)).join("\n"), "utf8");
        await client.insertStream(this.local(table), Readable.from([body]), { format: "JSONEachRow" });
        return;
      } catch (err) {
        // Nothing is sent again before the shard says what landed (its answer may only have been lost).
        for (;;) {
          if (tries >= this.attempts) throw err;
          await pause();
          tries++;
          try {
            left = (await this.present(shard, appPk, table, [left.at(-1)!])).size > 0 ? [] : await this.absent(shard, appPk, table, left);
            break;
          } catch {
            // the shard does not answer yet: ask again
          }
        }
      }
    }
  }

  /** call_raw rows are keyed and versioned: sent again, they collapse into one. */
  private async insertIdempotent(client: ClickHouse, table: string, rows: ReadonlyArray<Record<string, unknown>>): Promise<void> {
    if (rows.length === 0) return;
    const body = Buffer.from(rows.map((r) => JSON.stringify(r)).join("\n"), "utf8");
    for (let attempt = 1; ; attempt++) {
      try {
        await client.insertStream(table, Readable.from([body]), { format: "JSONEachRow" });
        return;
      } catch (err) {
        if (attempt >= this.attempts) throw err;
        await new Promise((r) => setTimeout(r, this.retryMs * 2 ** (attempt - 1)));
      }
    }
  }

  /**
   * Completes the stored changes among `stored` whose signed rows did not all land (a
   * writer killed between its inserts): what a reader of stored states that writes
   * nothing for them (the sync, for calls that did not change) calls. Returns how many.
   */
  async complete(appPk: number, stored: Iterable<StoredCallV2 | undefined>): Promise<number> {
    const found = [...stored].filter((s): s is StoredCallV2 => s !== undefined && !s.verified);
    if (found.length === 0) return 0;
    const uids = new Set<string>();
    for (const s of found) for (const p of [...(s.state?.participants ?? []), ...(s.previous?.participants ?? [])]) uids.add(p.uid);
    return this.verify(appPk, found, await this.codes(appPk, found.map((s) => s.sessionId), [...uids]));
  }

  /**
   * Writes one app's batch of changes (a key appearing twice: the later change wins).
   * `known`: stored rows the caller already looked up (the sync asks per page); the others
   * are looked up here. Resolves once every change is in every table.
   */
  async write(appPk: number, batch: readonly CallChangeV2[], known?: Map<string, StoredCallV2 | undefined>): Promise<WriteResultV2> {
    const byId = new Map<string, CallChangeV2>();
    for (const c of batch) byId.set(c.sessionId, c);
    const ids = [...byId.keys()];
    const stored = new Map<string, StoredCallV2 | undefined>();
    const unknown = ids.filter((id) => !known?.has(id));
    if (unknown.length > 0) for (const [id, s] of await this.lookup(appPk, unknown)) stored.set(id, s);
    for (const id of ids) if (known?.has(id)) stored.set(id, known.get(id));
    await this.options.onStep?.("looked-up", -1);

    const found = [...stored.values()].filter((s): s is StoredCallV2 => s !== undefined);
    const uids = new Set<string>();
    for (const s of [...found.flatMap((x) => [x.state, x.previous]), ...[...byId.values()].map((c) => c.next)]) for (const p of s?.participants ?? []) uids.add(p.uid);
    const [codes, linked] = await Promise.all([
      this.codes(appPk, ids, [...uids]),
      this.linked(appPk, [...byId.values()].filter((c) => c.next).map((c) => c.sessionId)),
    ]);
    const completed = await this.verify(appPk, found, codes);

    const perShard = this.shards.map(() => ({ raw: [] as Array<Record<string, unknown>>, calls: [] as Array<Record<string, unknown>>, participants: [] as Array<Record<string, unknown>> }));
    const uidRows = new Map<string, Record<string, unknown>>();
    const after = new Map(stored);
    let written = 0;
    for (let c of byId.values()) {
      const s = stored.get(c.sessionId);
      if (s && c.version <= s.version) {
        if (!c.raiseVersion) continue; // a replay of what is stored (the copy run again)
        c = { ...c, version: s.version + 1 };
      }
      const previous = s && !s.deleted ? s.state : undefined;
      if (!previous && !c.next) continue; // a delete of a call never written
      // has_link from the links stored now, whatever the caller sent: a re-sync keeps the flag, a link that came before its call sets it.
      const next = c.next ? { ...c.next, version: c.version, hasLink: linked.has(c.sessionId) } : undefined;
      const rows = changeRowsV2(previous, next, codes);
      const shard = perShard[codes.shardOf(c.sessionId)];
      shard.raw.push(callRawRow(appPk, c.sessionId, c.version, previous, next, c.raw ?? null));
      shard.calls.push(...rows.calls);
      shard.participants.push(...rows.participants);
      for (const u of rows.uids) uidRows.set(String(u.uid_code), u);
      after.set(c.sessionId, {
        sessionId: c.sessionId, version: c.version, deleted: !next, source: next?.source ?? "deleted", contentHash: next?.contentHash ?? null,
        status: next?.status ?? null, firstSeenMs: next?.firstSeenMs ?? 0, arrival: next?.arrival ?? 0, state: next, previous, verified: true,
      });
      written++;
    }
    // uids first: a code's uid is there before any row that carries the code (a repeat collapses).
    await this.options.onStep?.("uids", -1);
    if (uidRows.size > 0) await this.insertIdempotent(this.ch, UIDS.name, [...uidRows.values()]);
    await Promise.all(
      perShard.map(async (rows, shard) => {
        if (rows.raw.length === 0) return;
        const step = async (s: WriteStepV2) => this.options.onStep?.(s, shard);
        await step("raw");
        await this.insertIdempotent(this.shards[shard].client, this.local(CALL_RAW.name), rows.raw);
        await step("calls");
        await this.insertOnce(shard, appPk, CALLS_V2.name, rows.calls);
        await step("participants");
        await this.insertOnce(shard, appPk, PARTICIPANTS_V2.name, rows.participants);
      }),
    );
    await this.options.onStep?.("done", -1);
    return { written, completed, stored: after };
  }
}

/** A probe row's key as text, the same whether built from a row to write or read back. */
function probeKey(table: string, r: Record<string, unknown>): string {
  return table === CALLS_V2.name
    ? `${Number(r.start_at)}|${String(r.session_id)}|${Number(r.version)}|${Number(r.sign)}`
    : `${Number(r.start_at)}|${String(r.session_code)}|${Number(r.seq)}|${Number(r.version)}|${Number(r.sign)}`;
}


const globalForWriter = globalThis as unknown as { callboardWriterV2?: { key: string; writer: Promise<CallWriterV2> } };

/**
 * The process's v2 writer over CLICKHOUSE_URL / CLICKHOUSE_CLUSTER (its shards reached
 * once, cached on globalThis like the client). Throws when ClickHouse is not configured.
 */
export function processWriterV2(): Promise<CallWriterV2> {
  const ch = clickhouse();
  const config = clickHouseConfig();
  if (!config) throw new Error("ClickHouse is not configured (CLICKHOUSE_URL is not set)");
  const key = `${config.origin}|${config.database}|${config.cluster ?? ""}|${ch.label}`;
  const cached = globalForWriter.callboardWriterV2;
  if (cached?.key === key) return cached.writer;
  const writer = openShardsV2(ch, config).then((shards) => {
    // The shards' own clients (not the process's one) close with the process's client.
    whenClickHouseCloses(async () => {
      if (globalForWriter.callboardWriterV2?.writer === writer) globalForWriter.callboardWriterV2 = undefined;
      await Promise.all(shards.filter((s) => s.client !== ch).map((s) => s.client.close()));
    });
    return new CallWriterV2(ch, shards);
  });
  // A failure (a shard down) is not kept: the next batch tries again.
  writer.catch(() => {
    if (globalForWriter.callboardWriterV2?.writer === writer) globalForWriter.callboardWriterV2 = undefined;
  });
  globalForWriter.callboardWriterV2 = { key, writer };
  return writer;
}
