/** Shared set-up of the lib/auth suites: a fresh warehouse file (or Postgres database) per suite. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { openDatabase, type Db } from "@/db/client";
import { migratePostgres, openPostgres, type PgDb } from "@/db/postgres/client";
import { calls } from "@/db/schema";
import { stateDbOfPostgres } from "@/db/state";
import { parsePostgresConfig } from "@/lib/postgres/config";
import { POSTGRES_SKIP_REASON, startPostgres, type TestPostgres } from "@/lib/postgres/test-postgres";
import { addApp } from "@/lib/apps/registry";
import { resetEnvForTests } from "@/lib/config/env";

export const TEST_SECRET = "test-secret-for-callboard-auth-suites-0123456789";

export function useTestEnv(extra: Record<string, string | undefined> = {}): void {
  const vars: Record<string, string | undefined> = {
    NODE_ENV: "test",
    AUTH_SECRET: TEST_SECRET,
    CALLBOARD_ADMIN_EMAIL: "first-admin@example.com",
    CALLBOARD_ADMIN_PASSWORD: "first-admin-password",
    PLATFORM_MANAGEMENT_URL: undefined,
    PLATFORM_MANAGEMENT_KEY: undefined,
    PLATFORM_MANAGEMENT_SECRET: undefined,
    ...extra,
  };
  for (const [k, v] of Object.entries(vars)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  resetEnvForTests();
}

export function freshDb(): { db: Db; file: string; dispose(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), "callboard-auth-"));
  const file = path.join(dir, "warehouse.db");
  const db = openDatabase(file);
  return {
    db,
    file,
    dispose() {
      db.$client.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function seedApp(db: Db, appId: string, apiKey = `key-${appId}-SECRET`) {
  return await addApp(db, { appId, name: `App ${appId}`, region: "eu", apiKey, webhookUsername: "hook", webhookPassword: `pw-${appId}-SECRET` });
}

export function seedCall(db: Db, appPk: number, sessionId: string): void {
  const now = Date.now();
  db.insert(calls).values({ appPk, sessionId, startAt: 1_700_000_000, firstSeenMs: now, updatedMs: now }).run();
}

/** The two places Callboard's state can live: the SQLite file, or Postgres (DATABASE_URL). */
export type StateDialect = "sqlite" | "postgres";

/**
 * The dialects a state suite runs on: both, unless Postgres is not installed here
 * (never in CI: .ci/run installs it; lib/postgres/test-postgres.ts).
 */
export const STATE_DIALECTS: StateDialect[] = POSTGRES_SKIP_REASON ? ["sqlite"] : ["sqlite", "postgres"];

let sharedPostgres: Promise<TestPostgres> | undefined;
let openPostgresStates = 0;
let databases = 0;

/**
 * A fresh, migrated state store: a SQLite file, or a new database on this process's
 * test Postgres, started on first use and stopped when the last store on it is disposed
 * (a test worker may end without an exit event, so the server's own exit hook is not enough).
 * `connect()` opens another handle on the same state: a second Callboard server.
 * `location` is where a child process finds the same state: the file, or the Postgres URL.
 */
export async function freshState(dialect: StateDialect): Promise<{ db: Db; connect(): Db; location: string; dispose(): Promise<void> }> {
  if (dialect === "sqlite") {
    const ctx = freshDb();
    const others: Db[] = [];
    const connect = () => {
      const other = openDatabase(ctx.file);
      others.push(other);
      return other;
    };
    return {
      db: ctx.db,
      connect,
      location: ctx.file,
      async dispose() {
        for (const other of others) other.$client.close();
        ctx.dispose();
      },
    };
  }
  sharedPostgres ??= startPostgres();
  openPostgresStates++;
  const server = await sharedPostgres;
  const url = await server.createDatabase(`state_${process.pid}_${++databases}`);
  const config = parsePostgresConfig(url);
  await migratePostgres(config);
  const pools: PgDb[] = [];
  const connect = () => {
    const pgDb = openPostgres(config, { max: 4 });
    pools.push(pgDb);
    return stateDbOfPostgres(pgDb);
  };
  return {
    db: connect(),
    connect,
    location: url,
    async dispose() {
      await Promise.all(pools.map((p) => p.$client.end()));
      if (--openPostgresStates === 0) {
        sharedPostgres = undefined;
        await server.stop();
      }
    },
  };
}
