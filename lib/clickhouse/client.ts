import { randomUUID } from "node:crypto";
import type { Readable } from "node:stream";
import { finished } from "node:stream/promises";
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from "@clickhouse/client";
import { env } from "@/lib/config/env";
import { parseClickHouseConfig, scrubSecret, type ClickHouseConfig } from "./config";
import { quoteIdentifier, type Placement } from "./schema";

/**
 * What the warehouse code needs from ClickHouse, whoever answers: a server over HTTP
 * (`@clickhouse/client`, here) or the embedded chdb in tests (test-chdb.ts), so that
 * the same DDL and queries run on both. Rows are JSON objects (64-bit integers as
 * numbers). Every error thrown is a ClickHouseError whose message never holds the
 * password.
 */
export interface ClickHouse {
  /** Where it points, safe to log (no password). */
  readonly label: string;
  /** The database and cluster the warehouse's tables live in. */
  readonly placement: Placement;
  /**
   * Runs a statement that returns nothing (DDL, ALTER, INSERT … SELECT), with server
   * settings for this statement alone; `queryId` names it in system.processes (so a later
   * run can find and kill what a killed process left running on the server).
   */
  command(sql: string, settings?: Record<string, string | number>, queryId?: string): Promise<void>;
  /** All rows of a query (`queryId`: its query_id, which the query can look itself up by in system.processes). */
  rows<T>(sql: string, signal?: AbortSignal, queryId?: string): Promise<T[]>;
  /** The rows of a query as they arrive (constant memory: CSV exports). */
  stream<T>(sql: string, signal?: AbortSignal): AsyncIterable<T>;
  /**
   * The answer of a query in RowBinary (the calls CSV's decoder reads it: no text to parse),
   * chunk by chunk as it arrives, read only as fast as the caller takes it. A caller that
   * leaves early (the client went away) stops the query on the server, not only the
   * connection. On 18.16 a query that fails after its first blocks ends the bytes with its
   * error's text: the decoder must recognise it (calls-csv.ts).
   */
  streamRowBinary(sql: string, signal?: AbortSignal): AsyncIterable<Uint8Array>;
  /** Inserts rows (objects keyed by column name) into `table` of the warehouse's database. */
  insert(table: string, rows: ReadonlyArray<Record<string, unknown>>): Promise<void>;
  /**
   * One insert into `table` whose body is sent as it is produced: the sync streams a
   * batch while it parses the next pages, holding none of it (rows kept until a commit
   * are promoted and cost old-space GC). The body is in `format` (JSONEachRow by default;
   * RowBinary, row-binary.ts, with `columns` in the order the values are written).
   * Resolves once ClickHouse has taken the whole body (the stream ended).
   */
  insertStream(table: string, body: Readable, options?: InsertStreamOptions): Promise<void>;
  close(): Promise<void>;
}

export interface InsertStreamOptions {
  format?: "JSONEachRow" | "RowBinary";
  columns?: readonly string[];
}

/**
 * The server's modules (tsx) and Next's bundle are two copies of this file, and the
 * process's one client (cached on globalThis) throws the first copy's errors into the
 * second's routes: a brand in the global symbol registry makes `instanceof` hold across
 * both, as for HttpError (lib/http/errors.ts).
 */
const CLICKHOUSE_ERROR_BRAND = Symbol.for("callboard.ClickHouseError");

export class ClickHouseError extends Error {
  readonly [CLICKHOUSE_ERROR_BRAND] = true;

  static [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[CLICKHOUSE_ERROR_BRAND] === true;
  }

  constructor(
    message: string,
    /** ClickHouse's error code (e.g. "60" unknown table), when the server sent one. */
    readonly code?: string,
  ) {
    super(message);
    this.name = "ClickHouseError";
  }
}

/**
 * Settings every request runs with: 64-bit integers as JSON numbers (our values stay far
 * below 2^53), and inserts into a Distributed table written to their shards before the
 * insert returns (not queued on the receiving server: a write that returned is readable,
 * and a count right after a copy is exact).
 */
const SETTINGS = { output_format_json_quote_64bit_integers: 0, insert_distributed_sync: 1 } as const;

/** A ClickHouseError from anything thrown by the client, with the password scrubbed. */
export function toClickHouseError(err: unknown, c: Pick<ClickHouseConfig, "password">, what: string): ClickHouseError {
  if (err instanceof ClickHouseError) return err;
  const raw = err instanceof Error ? err.message : String(err);
  const own = (err as { code?: unknown } | null)?.code;
  // A query that fails after its first block has answered 200: the server's error then
  // ends the body ("Code: 241, e.displayText() = …"), and only the parse of that line fails.
  const code = typeof own === "string" ? own : /\bCode: (\d+)/.exec(raw)?.[1];
  return new ClickHouseError(`ClickHouse ${what} failed: ${scrubSecret(raw, c.password)}`, code);
}

export interface OpenOptions {
  /** Connect without selecting the database (to create it). */
  noDatabase?: boolean;
  /** Per-request timeout, ms (default 300 s: a copy's large insert or a report over 100M calls). */
  requestTimeoutMs?: number;
  /**
   * The deadline of a query read whole (`rows`) and of a stream's first rows, ms (default:
   * none). Past it the query is given up — the caller gets a ClickHouseError with code
   * TIMEOUT, which the reports answer as 503 — and cancelled on the server (KILL QUERY by
   * its id), so that a frozen shard does not pile up queries. `rows` also tells the server
   * (max_execution_time) so that it stops by itself. On 18.16 a query blocked reading from
   * a frozen shard's socket only stops when that read does (the shard answers, or the
   * server's own receive_timeout passes: README, "ClickHouse").
   */
  queryTimeoutMs?: number;
}

/** The code of the error a query past its deadline throws (not a number: isUnavailable reads it as "not reachable"). */
export const QUERY_TIMEOUT_CODE = "TIMEOUT";

/** How long the KILL QUERY of a query past its deadline may take (the server it goes to may be the one that hangs). */
const KILL_TIMEOUT_MS = 5_000;

/** A client of one server over HTTP. */
export function openClickHouse(c: ClickHouseConfig, options: OpenOptions = {}): ClickHouse {
  const client: ClickHouseClient = createClient({
    url: c.origin,
    username: c.username,
    password: c.password,
    database: options.noDatabase ? "default" : c.database,
    application: "callboard",
    request_timeout: options.requestTimeoutMs ?? 300_000,
    clickhouse_settings: SETTINGS,
    // The client's own log would print failed requests whole; errors reach ours scrubbed.
    log: { level: ClickHouseLogLevel.OFF },
  });
  const fail = (err: unknown, what: string) => toClickHouseError(err, c, what);
  const timeoutMs = options.queryTimeoutMs;
  /** A query's id, and a signal that aborts at the caller's abort or at the deadline; at the deadline the query is killed on the server too. */
  const queryDeadline = (signal: AbortSignal | undefined, givenQueryId?: string) => {
    const queryId = givenQueryId ?? randomUUID();
    if (timeoutMs === undefined) {
      return { queryId, signal, serverSettings: {}, expired: () => false, clear: () => undefined, error: () => new ClickHouseError("unreachable") };
    }
    const controller = new AbortController();
    let expired = false;
    const timer = setTimeout(() => {
      expired = true;
      controller.abort(new Error(`no answer within ${timeoutMs / 1000} s`));
      // KILL ... ASYNC returns at once; the query stops at its next check (for a frozen shard: when that shard answers or times out).
      void client
        .command({ query: `KILL QUERY WHERE query_id = '${queryId}' ASYNC`, abort_signal: AbortSignal.timeout(KILL_TIMEOUT_MS) })
        .catch(() => undefined);
    }, timeoutMs);
    const seconds = Math.max(1, Math.ceil(timeoutMs / 1000));
    return {
      queryId,
      signal: signal ? AbortSignal.any([signal, controller.signal]) : controller.signal,
      serverSettings: { max_execution_time: seconds },
      expired: () => expired,
      clear: () => clearTimeout(timer),
      error: () => new ClickHouseError(`ClickHouse query gave no answer within ${timeoutMs / 1000} s (CLICKHOUSE_QUERY_TIMEOUT_SECONDS); cancelled`, QUERY_TIMEOUT_CODE),
    };
  };
  return {
    label: c.redacted,
    placement: { database: c.database, cluster: c.cluster },
    async command(sql, settings, queryId) {
      try {
        await client.command({ query: sql, ...(settings ? { clickhouse_settings: settings } : {}), ...(queryId ? { query_id: queryId } : {}) });
      } catch (err) {
        throw fail(err, "statement");
      }
    },
    async rows<T>(sql: string, signal?: AbortSignal, queryId?: string) {
      const deadline = queryDeadline(signal, queryId);
      try {
        // The whole answer is made before the status is sent (answers read whole are small),
        // so a query that fails part way is an HTTP error with ClickHouse's code, not a
        // 200 whose body ends in an error text.
        const rs = await client.query({
          query: sql, format: "JSONEachRow", abort_signal: deadline.signal, query_id: deadline.queryId,
          clickhouse_settings: { wait_end_of_query: 1, ...deadline.serverSettings },
        });
        return await rs.json<T>();
      } catch (err) {
        throw deadline.expired() ? deadline.error() : fail(err, "query");
      } finally {
        deadline.clear();
      }
    },
    async *stream<T>(sql: string, signal?: AbortSignal) {
      // Only the first rows have a deadline: an export of millions of rows may take minutes.
      const deadline = queryDeadline(signal);
      let rs;
      try {
        rs = await client.query({ query: sql, format: "JSONEachRow", abort_signal: deadline.signal, query_id: deadline.queryId });
      } catch (err) {
        deadline.clear();
        throw deadline.expired() ? deadline.error() : fail(err, "query");
      }
      try {
        for await (const batch of rs.stream()) {
          deadline.clear();
          for (const row of batch) yield row.json<T>();
        }
      } catch (err) {
        throw deadline.expired() ? deadline.error() : fail(err, "query");
      } finally {
        deadline.clear();
        rs.close();
      }
    },
    async *streamRowBinary(sql: string, signal?: AbortSignal) {
      // As `stream`: only the first bytes have a deadline.
      const deadline = queryDeadline(signal);
      let result;
      try {
        result = await client.exec({ query: `${sql} FORMAT RowBinary`, abort_signal: deadline.signal, query_id: deadline.queryId });
      } catch (err) {
        deadline.clear();
        throw deadline.expired() ? deadline.error() : fail(err, "query");
      }
      let ended = false;
      try {
        for await (const chunk of result.stream as AsyncIterable<Buffer>) {
          deadline.clear();
          yield chunk;
        }
        ended = true;
      } catch (err) {
        throw deadline.expired() ? deadline.error() : fail(err, "query");
      } finally {
        deadline.clear();
        if (!ended) {
          result.stream.destroy();
          // A closed socket stops the query only at its next write, and a Distributed query's
          // shards only when the first server notices: KILL stops every part of it now.
          void client
            .command({ query: `KILL QUERY WHERE query_id = '${result.query_id}' ASYNC`, abort_signal: AbortSignal.timeout(KILL_TIMEOUT_MS) })
            .catch(() => undefined);
        }
      }
    },
    async insert(table, rows) {
      if (rows.length === 0) return;
      try {
        await client.insert({ table, values: rows as Array<Record<string, unknown>>, format: "JSONEachRow" });
      } catch (err) {
        throw fail(err, `insert into ${table}`);
      }
    },
    async insertStream(table, body, options = {}) {
      const columns = options.columns ? ` (${options.columns.map(quoteIdentifier).join(", ")})` : "";
      try {
        const r = await client.exec({ query: `INSERT INTO ${quoteIdentifier(table)}${columns} FORMAT ${options.format ?? "JSONEachRow"}`, values: body });
        r.stream.resume(); // an insert's answer is empty; read it so the socket is released
        await finished(r.stream);
      } catch (err) {
        body.destroy();
        throw fail(err, `insert into ${table}`);
      }
    },
    async close() {
      await client.close();
    },
  };
}

const globalForClickHouse = globalThis as unknown as { callboardClickHouse?: { key: string; ch: ClickHouse } };

/** Whether this process keeps its facts and answers its reports on ClickHouse (CLICKHOUSE_URL set). */
export function clickHouseConfigured(): boolean {
  return env().CLICKHOUSE_URL !== undefined;
}

/** The configuration from the environment (CLICKHOUSE_URL, CLICKHOUSE_CLUSTER); undefined when not set. */
export function clickHouseConfig(): ClickHouseConfig | undefined {
  const e = env();
  return e.CLICKHOUSE_URL === undefined ? undefined : parseClickHouseConfig(e.CLICKHOUSE_URL, e.CLICKHOUSE_CLUSTER);
}

/** The process's one ClickHouse client (cached on globalThis: dev reloads reuse it). Throws when not configured. */
export function clickhouse(): ClickHouse {
  const c = clickHouseConfig();
  if (!c) throw new ClickHouseError("ClickHouse is not configured (CLICKHOUSE_URL is not set)");
  const key = `${c.origin}|${c.username}|${c.database}|${c.cluster ?? ""}|${c.password}`;
  const cached = globalForClickHouse.callboardClickHouse;
  if (cached && cached.key === key) return cached.ch;
  void cached?.ch.close();
  const ch = openClickHouse(c, { queryTimeoutMs: env().CLICKHOUSE_QUERY_TIMEOUT_SECONDS * 1000 });
  globalForClickHouse.callboardClickHouse = { key, ch };
  return ch;
}

const globalForHooks = globalThis as unknown as { callboardClickHouseCloseHooks?: Set<() => Promise<void>> };

/** Runs `hook` when the process's client is closed: what holds connections of its own (writer-v2.ts's shard clients) lets them go too. */
export function whenClickHouseCloses(hook: () => Promise<void>): void {
  (globalForHooks.callboardClickHouseCloseHooks ??= new Set()).add(hook);
}

/** Closes the process's client (tests; a server shutting down), and what was opened beside it. */
export async function closeClickHouse(): Promise<void> {
  const cached = globalForClickHouse.callboardClickHouse;
  globalForClickHouse.callboardClickHouse = undefined;
  const hooks = [...(globalForHooks.callboardClickHouseCloseHooks ?? [])];
  globalForHooks.callboardClickHouseCloseHooks?.clear();
  await Promise.all(hooks.map((h) => h().catch(() => undefined)));
  await cached?.ch.close();
}
