import type { Readable } from "node:stream";
import { finished } from "node:stream/promises";
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from "@clickhouse/client";
import { env } from "@/lib/config/env";
import { parseClickHouseConfig, scrubSecret, type ClickHouseConfig } from "./config";
import { quoteIdentifier, type Placement } from "./schema";

/**
 * What the warehouse code needs from ClickHouse, whoever answers: a server over HTTP
 * (`@clickhouse/client`, here) or the embedded chdb in tests (testing-chdb.ts), so that
 * the same DDL and queries run on both. Rows are JSON objects (64-bit integers as
 * numbers). Every error thrown is a ClickHouseError whose message never holds the
 * password.
 */
export interface ClickHouse {
  /** Where it points, safe to log (no password). */
  readonly label: string;
  /** The database and cluster the warehouse's tables live in. */
  readonly placement: Placement;
  /** Runs a statement that returns nothing (DDL, ALTER). */
  command(sql: string): Promise<void>;
  /** All rows of a query (`queryId`: its query_id, which the query can look itself up by in system.processes). */
  rows<T>(sql: string, signal?: AbortSignal, queryId?: string): Promise<T[]>;
  /** The rows of a query as they arrive (constant memory: CSV exports). */
  stream<T>(sql: string, signal?: AbortSignal): AsyncIterable<T>;
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
}

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
  return {
    label: c.redacted,
    placement: { database: c.database, cluster: c.cluster },
    async command(sql) {
      try {
        await client.command({ query: sql });
      } catch (err) {
        throw fail(err, "statement");
      }
    },
    async rows<T>(sql: string, signal?: AbortSignal, queryId?: string) {
      try {
        // The whole answer is made before the status is sent (answers read whole are small),
        // so a query that fails part way is an HTTP error with ClickHouse's code, not a
        // 200 whose body ends in an error text.
        const rs = await client.query({ query: sql, format: "JSONEachRow", abort_signal: signal, query_id: queryId, clickhouse_settings: { wait_end_of_query: 1 } });
        return await rs.json<T>();
      } catch (err) {
        throw fail(err, "query");
      }
    },
    async *stream<T>(sql: string, signal?: AbortSignal) {
      let rs;
      try {
        rs = await client.query({ query: sql, format: "JSONEachRow", abort_signal: signal });
      } catch (err) {
        throw fail(err, "query");
      }
      try {
        for await (const batch of rs.stream()) {
          for (const row of batch) yield row.json<T>();
        }
      } catch (err) {
        throw fail(err, "query");
      } finally {
        rs.close();
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
  const ch = openClickHouse(c);
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
