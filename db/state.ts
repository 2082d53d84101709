import { getTableName, is, sql } from "drizzle-orm";
import { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { PgDb } from "./postgres/client";
import { pgStateTable, STATE_TABLES } from "./postgres/schema";
import { tryWrite, type Db } from "./client";
import * as schema from "./schema";

/**
 * One query, two dialects (docs/decisions/0042-state-queries-in-two-dialects.md).
 *
 * A state module (users, tokens, the throttle, …) takes a `Db` and writes each query
 * once with drizzle's builders, always AWAITED (never `.get()`, `.all()`, `.run()`:
 * those exist on SQLite only), against the tables `tablesOf(db)` gives it:
 *
 *   const { users } = tablesOf(db);
 *   const [row] = await db.select().from(users).where(eq(users.pk, pk));
 *
 * On the SQLite file, `tablesOf` is db/schema itself. On Postgres (`stateDbOfPostgres`),
 * `db` is drizzle's node-postgres database and `tablesOf` gives the tables' Postgres twins
 * (db/postgres/schema.ts): same property names, same value types (bigint as number,
 * boolean, json), derived from the same definitions. The types say SQLite in both cases;
 * the builders the two dialects share (select, insert, update, delete, returning,
 * onConflictDoNothing / DoUpdate, count, min…) build the same query for either, and the
 * suites run each module on both (`STATE_DIALECTS`, lib/auth/test-support.ts).
 */

/**
 * Marks a handle as Postgres. A mark on the object, under a registered symbol, rather than
 * a module's WeakSet: the server (scripts/server.ts) and Next's bundle each load their own
 * copy of this module, and share the process's one pool (db/index.ts caches it on
 * globalThis) — a handle made by one copy must read as Postgres in the other.
 */
const POSTGRES_MARK = Symbol.for("callboard.state.postgres");

/** A Postgres database (or transaction) as the `Db` the state modules take. */
export function stateDbOfPostgres(pgDb: PgDb): Db {
  if (!(POSTGRES_MARK in pgDb)) Object.defineProperty(pgDb, POSTGRES_MARK, { value: true });
  return pgDb as unknown as Db;
}

export function isPostgresState(db: Db): boolean {
  return (db as unknown as Record<symbol, unknown>)[POSTGRES_MARK] === true;
}

type Schema = typeof schema;

/** db/schema with each state table replaced by its Postgres twin; the facts' tables throw (they live in ClickHouse). */
const postgresSchema: Schema = (() => {
  const stateNames = new Set(STATE_TABLES.map((t) => getTableName(t)));
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (!is(value, SQLiteTable)) {
      out[key] = value;
      continue;
    }
    const name = getTableName(value);
    if (stateNames.has(name)) {
      out[key] = pgStateTable(name);
    } else {
      Object.defineProperty(out, key, {
        enumerable: true,
        get() {
          throw new Error(`${name} is not one of Callboard's state tables: with DATABASE_URL it lives in ClickHouse, not Postgres`);
        },
      });
    }
  }
  return out as Schema;
})();

/** The tables to query `db` with: db/schema on SQLite, their Postgres twins on Postgres. */
export function tablesOf(db: Db): Schema {
  return isPostgresState(db) ? postgresSchema : schema;
}

/** Runs state transactions one at a time per SQLite connection (they span awaits). */
const sqliteTransactionQueues = new WeakMap<Db, Promise<unknown>>();

/**
 * Several statements that commit together or not at all. `work` gets the handle to
 * run them on (a transaction on Postgres; the same connection on SQLite) and must
 * await only state statements, never network or timers: on SQLite the transaction is
 * open on the process's one connection until `work` settles.
 *
 * On SQLite: BEGIN IMMEDIATE, then `work`, then COMMIT (ROLLBACK on a throw). Each awaited
 * drizzle SQLite statement runs synchronously when awaited, so only microtasks run
 * between the statements; still, a statement another request issues in that window runs
 * inside this transaction (and better-sqlite3's own transactions nest as savepoints), so
 * it commits or rolls back with it. Keep `work` short.
 */
export async function stateTransaction<T>(db: Db, work: (tx: Db) => Promise<T>): Promise<T> {
  if (isPostgresState(db)) {
    return (db as unknown as PgDb).transaction(async (tx) => work(stateDbOfPostgres(tx as unknown as PgDb)));
  }
  const sqlite = db.$client;
  const previous = sqliteTransactionQueues.get(db) ?? Promise.resolve();
  const run = previous.then(async () => {
    if (sqlite.inTransaction) return work(db); // inside a caller's transaction: it commits for us
    sqlite.exec("BEGIN IMMEDIATE");
    try {
      const result = await work(db);
      sqlite.exec("COMMIT");
      return result;
    } catch (error) {
      if (sqlite.inTransaction) sqlite.exec("ROLLBACK");
      throw error;
    }
  });
  sqliteTransactionQueues.set(
    db,
    run.catch(() => undefined),
  );
  return run;
}

/**
 * A write that is nice to have but must never fail (or, on SQLite, wait for the write
 * lock of) the request making it: a token's last use. Pass the statement unawaited.
 * Returns whether it ran.
 */
export async function tryStateWrite(db: Db, statement: { run(): unknown } & PromiseLike<unknown>): Promise<boolean> {
  if (!isPostgresState(db)) return tryWrite(db, () => void statement.run());
  try {
    await statement;
    return true;
  } catch {
    return false;
  }
}

/**
 * Inside a `stateTransaction`: waits until no other transaction holding the same `name`
 * is open, and holds it until this one ends. On SQLite the transaction is already the
 * only writer (BEGIN IMMEDIATE); on Postgres it is a transaction-scoped advisory lock, so
 * two servers doing the same thing (issuing the next gapless statement number) take turns.
 */
export async function serializeWithin(tx: Db, name: string): Promise<void> {
  if (!isPostgresState(tx)) return;
  await (tx as unknown as PgDb).execute(sql`SELECT pg_advisory_xact_lock(hashtext(${name}))`);
}

/** A unique index refused the write (SQLite and Postgres word it differently; drizzle wraps it in `cause`). */
export function isUniqueViolation(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    const code = (e as { code?: unknown }).code;
    if (code === "SQLITE_CONSTRAINT_UNIQUE" || code === "23505") return true;
  }
  return false;
}
