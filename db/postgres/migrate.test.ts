import { readFileSync } from "node:fs";
import path from "node:path";
import { getTableColumns, getTableName } from "drizzle-orm";
import { getTableConfig } from "drizzle-orm/sqlite-core";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parsePostgresConfig } from "@/lib/postgres/config";
import { POSTGRES_SKIP_REASON, startPostgres, type TestPostgres } from "@/lib/postgres/test-postgres";
import { migratePostgres } from "./client";
import { pgStateTable, STATE_TABLES } from "./schema";

describe.skipIf(POSTGRES_SKIP_REASON)("Postgres migrations (real Postgres on loopback)", () => {
  let server: TestPostgres;
  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("four servers starting at once apply each migration exactly once, and all of them start", async () => {
    const config = parsePostgresConfig(await server.createDatabase("concurrent"));
    const reports = await Promise.all([1, 2, 3, 4].map(() => migratePostgres(config)));
    const applied = reports.flatMap((r) => r.applied);
    // Each migration of the journal once, in order, whichever server applied it.
    const tags = (JSON.parse(readFileSync(path.join(process.cwd(), "db", "postgres", "migrations", "meta", "_journal.json"), "utf8")) as { entries: { tag: string }[] }).entries.map((e) => e.tag);
    expect(tags.length).toBeGreaterThan(1);
    expect(applied).toEqual(tags);
    const client = new pg.Client({ connectionString: config.connectionString });
    await client.connect();
    try {
      const journal = await client.query("SELECT hash FROM drizzle.__drizzle_migrations");
      expect(journal.rowCount).toBe(tags.length);
      // A later start finds nothing to do.
      expect((await migratePostgres(config)).applied).toEqual([]);
    } finally {
      await client.end();
    }
  });

  it("creates every state table with the columns, nullability and keys of its SQLite definition", async () => {
    const config = parsePostgresConfig(await server.createDatabase("shape"));
    await migratePostgres(config);
    const client = new pg.Client({ connectionString: config.connectionString });
    await client.connect();
    try {
      for (const table of STATE_TABLES) {
        const name = getTableName(table);
        const sqliteColumns = Object.values(getTableColumns(table));
        const result = await client.query<{ column_name: string; is_nullable: string; data_type: string }>(
          "SELECT column_name, is_nullable, data_type FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1",
          [name],
        );
        const pgColumns = new Map(result.rows.map((r) => [r.column_name, r]));
        expect([...pgColumns.keys()].sort(), name).toEqual(sqliteColumns.map((c) => c.name).sort());
        const primary = new Set(getTableConfig(table).primaryKeys.flatMap((k) => k.columns.map((c) => c.name)));
        for (const column of sqliteColumns) {
          const twin = pgColumns.get(column.name);
          const required = column.notNull || column.primary || primary.has(column.name);
          expect(twin?.is_nullable, `${name}.${column.name}`).toBe(required ? "NO" : "YES");
        }
        expect(pgStateTable(name)).toBeDefined();
      }
    } finally {
      await client.end();
    }
  });

  it("keeps the SQLite definitions' constraints: a repeated webhook idempotency key and a second statement for a month are refused", async () => {
    const config = parsePostgresConfig(await server.createDatabase("constraints"));
    await migratePostgres(config);
    const client = new pg.Client({ connectionString: config.connectionString });
    await client.connect();
    try {
      const app = await client.query<{ pk: string; created_ms: string }>(
        "INSERT INTO apps (app_id, name, region, api_key_enc, api_key_last4) VALUES ('a1', 'A', 'us', 'enc', '1234') RETURNING pk, created_ms",
      );
      const appPk = app.rows[0]!.pk;
      // The SQLite default (unixepoch() * 1000) has its Postgres spelling: now, in epoch ms.
      expect(Math.abs(Number(app.rows[0]!.created_ms) - Date.now())).toBeLessThan(60_000);
      const delivery = (key: string) =>
        client.query(
          "INSERT INTO webhook_deliveries (app_pk, idem_key, trigger, webhook, outcome, body, received_ms, last_received_ms) VALUES ($1, $2, 'call_ended', 'w', 'applied', '{}', 1, 1)",
          [appPk, key],
        );
      await delivery("k1");
      await expect(delivery("k1")).rejects.toThrow(/webhook_deliveries_app_key_uq/);
      const sheet = () =>
        client.query(
          "INSERT INTO price_sheets (app_pk, effective_month, currency, audio_per_minute, video_per_minute, per_recording, updated_ms, updated_by) VALUES (NULL, '2026-01', 'USD', '1', '1', '1', 1, 'a')",
        );
      await sheet();
      // The account default (app_pk NULL) is one sheet per month too: coalesce(app_pk, 0) in the index.
      await expect(sheet()).rejects.toThrow(/price_sheets_scope_month_uq/);
      // Removing the app removes its deliveries (ON DELETE CASCADE as in SQLite).
      await client.query("DELETE FROM apps WHERE pk = $1", [appPk]);
      expect((await client.query("SELECT count(*)::int AS n FROM webhook_deliveries")).rows[0]).toEqual({ n: 0 });
    } finally {
      await client.end();
    }
  });
});
