import { execFile } from "node:child_process";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POSTGRES_SKIP_REASON, startPostgres, type TestPostgres } from "./test-postgres";

/**
 * `npm run warehouse -- copy --to postgres` against a real Postgres on loopback: a SQLite
 * file with users, apps and their secrets, tokens, audit, an alert rule, sheets, a
 * statement and a webhook backlog, copied, interrupted, resumed and counted.
 */
process.env.AUTH_SECRET ??= "integration-test-secret-at-least-32-characters";
const { tempDbFile } = await import("@/lib/analytics/test-fixtures");
const { openDatabase } = await import("@/db/client");
const { migratePostgres, openPostgres } = await import("@/db/postgres/client");
const { addApp } = await import("@/lib/apps/registry");
const { createUser, removeUser } = await import("@/lib/auth/users");
const { createApiToken, revokeApiToken } = await import("@/lib/auth/tokens");
const { audit } = await import("@/lib/auth/audit");
const { decryptSecret } = await import("@/lib/crypto/secrets");
const { parsePostgresConfig } = await import("./config");
const { copyStateToPostgres, StateCopyMismatchError } = await import("./copy");
const schema = await import("@/db/schema");
const { sql } = await import("drizzle-orm");
const { bucketOf } = await import("@/lib/ingest/forwarder");
const { forwardDeliveries } = await import("@/lib/ingest/postgres-inbox");

type Db = ReturnType<typeof openDatabase>;

async function fillSqlite(file: string): Promise<Db> {
  const db = openDatabase(file);
  await addApp(db, { appId: "acme", name: "Acme", region: "eu", apiKey: "key-acme-secret-1234", webhookUseBasicAuth: true, webhookUsername: "hook", webhookPassword: "hook-pass-5678" });
  await addApp(db, { appId: "beta", name: "Beta", region: "us", apiKey: "key-beta-secret-9999" });
  const admin = await createUser(db, { email: "admin@example.com", password: "correct horse battery", role: "admin" });
  const viewer = await createUser(db, { email: "viewer@example.com", password: "correct horse battery", role: "viewer", apps: ["acme"] });
  const gone = await createUser(db, { email: "gone@example.com", password: "correct horse battery", role: "viewer" });
  await removeUser(db, gone.id);
  await createApiToken(db, { userId: admin.id, name: "finance" });
  const revoked = await createApiToken(db, { userId: viewer.id, name: "old" });
  await revokeApiToken(db, revoked.view.id);
  for (let i = 0; i < 7; i++) await audit(db, { email: "admin@example.com", userId: admin.id }, "user.create", `u${i}`, { i });
  const now = Date.now();
  db.insert(schema.alertRules)
    .values({ name: "Many failures", metric: "failed_calls", filters: { app: ["acme"] }, windowSeconds: 300, condition: { op: "above", value: 5 }, stateSinceMs: now, createdMs: now, updatedMs: now })
    .run();
  db.insert(schema.priceSheets)
    .values([
      { appPk: null, effectiveMonth: "2026-01", currency: "USD", audioPerMinute: "0.0040", videoPerMinute: "0.0100", perRecording: "0.05", updatedMs: now, updatedBy: "admin@example.com" },
      { appPk: 1, effectiveMonth: "2026-03", currency: "EUR", audioPerMinute: "0.0035", videoPerMinute: "0.0090", perRecording: "0.04", updatedMs: now, updatedBy: "admin@example.com" },
    ])
    .run();
  db.insert(schema.statements)
    .values({ number: 1, appPk: 1, appId: "acme", appName: "Acme", month: "2026-03", timeZone: "UTC", currency: "EUR", total: "12.50", body: { lines: [{ z: 1, a: "2" }], total: "12.50" }, issuedMs: now, issuedBy: "admin@example.com" })
    .run();
  for (let i = 0; i < 25; i++) {
    db.insert(schema.webhookDeliveries)
      .values({ appPk: 1 + (i % 2), idemKey: `k${i}`, trigger: "call_ended", webhook: "w", outcome: "applied", body: `{"trigger":"call_ended","n":${i}}`, receivedMs: now + i, lastReceivedMs: now + i })
      .run();
  }
  // Delivery 3 (forwarded) made a recording the SQLite forwarder had not sent yet (its recordings cursor is at 0).
  db.update(schema.webhookDeliveries).set({ trigger: "recording_generated", sessionId: "s-rec" }).where(sql`pk = 3`).run();
  db.insert(schema.recordings).values({ appPk: 1, sessionId: "s-rec", recordingUrl: "https://rec.example/s-rec.mp4", startTime: 5, receivedMs: now }).run();
  // Counted as the SQLite ingest counts them: each delivery in its bucket when it was stored.
  for (const d of db.select().from(schema.webhookDeliveries).all()) {
    db.insert(schema.eventCounts)
      .values({ appPk: d.appPk, trigger: d.trigger, bucketStart: bucketOf(d.trigger, d.body, d.receivedMs), count: 1 })
      .onConflictDoUpdate({ target: [schema.eventCounts.appPk, schema.eventCounts.bucketStart, schema.eventCounts.trigger], set: { count: sql`${schema.eventCounts.count} + 1` } })
      .run();
  }
  db.insert(schema.clickhouseForwarding).values({ stream: "deliveries", lastPk: 10 }).run();
  return db;
}

describe.skipIf(POSTGRES_SKIP_REASON)("copying Callboard's state from SQLite into Postgres", () => {
  let server: TestPostgres;
  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("copies every state row with the same values, resumes after an interruption without a duplicate, and passes the count check", async () => {
    const sqlite = await fillSqlite(tempDbFile("copy-state"));
    const config = parsePostgresConfig(await server.createDatabase("copy_resume"));
    await migratePostgres(config);
    const target = openPostgres(config, { max: 2 });
    try {
      // Interrupted after a few batches of three rows.
      const abort = new AbortController();
      let progressCalls = 0;
      await expect(
        copyStateToPostgres(sqlite, target.$client, {
          batchSize: 3,
          signal: abort.signal,
          onProgress: () => {
            if (++progressCalls === 12) abort.abort();
          },
        }),
      ).rejects.toThrow();
      const partial = Number((await target.$client.query("SELECT count(*) AS n FROM audit_log")).rows[0].n);
      const partialDeliveries = Number((await target.$client.query("SELECT count(*) AS n FROM webhook_deliveries")).rows[0].n);
      expect(partial + partialDeliveries).toBeLessThan(7 + 25);

      // The rerun resumes from the checkpoints and sends only what is missing.
      const counts = await copyStateToPostgres(sqlite, target.$client, { batchSize: 3 });
      for (const c of counts) expect(c.postgres, c.table).toBe(c.sqlite);
      const byTable = new Map(counts.map((c) => [c.table, c]));
      expect(byTable.get("users")).toMatchObject({ sqlite: 2, postgres: 2 });
      expect(byTable.get("webhook_deliveries")).toMatchObject({ sqlite: 25, postgres: 25 });
      const sentTwice = counts.reduce((sum, c) => sum + c.copied, 0);
      expect(sentTwice).toBeLessThan(counts.reduce((sum, c) => sum + c.sqlite, 0));

      // The 15 deliveries SQLite had not forwarded to ClickHouse (its cursor was at 10) wait in the Postgres forward queue,
      // with delivery 3, whose recording SQLite had not forwarded (the Postgres forwarder sends it with its delivery).
      const queued = await target.$client.query<{ delivery_pk: string }>("SELECT delivery_pk FROM delivery_forward_queue ORDER BY delivery_pk");
      expect(queued.rows.map((r) => Number(r.delivery_pk))).toEqual([3, ...Array.from({ length: 15 }, (_, i) => 11 + i)]);
      // Counted once: the copied counts hold the 9 deliveries that stay forwarded; the forwarder counts the 16 when it sends them.
      const counted = async () => Number((await target.$client.query("SELECT coalesce(sum(count), 0) AS n FROM event_counts")).rows[0].n);
      expect(await counted()).toBe(9);
      const recordingsSent: string[] = [];
      const noop = {
        writeDeliveries: async () => {}, writeEventCounts: async () => {}, writeClientSessions: async () => {},
        writeRecordings: async (rows: Array<{ sessionId: string }>) => void recordingsSent.push(...rows.map((r) => r.sessionId)),
      };
      expect(await forwardDeliveries(target.$client, noop)).toBe(16);
      expect(recordingsSent).toEqual(["s-rec"]);
      expect(await counted()).toBe(25);
      // A rerun of the copy queues the backlog again (sent again, ClickHouse collapses it) and takes it out with it: still counted once.
      await copyStateToPostgres(sqlite, target.$client, { batchSize: 3 });
      expect(await forwardDeliveries(target.$client, noop)).toBe(16);
      expect(await counted()).toBe(25);

      // Secrets are the same ciphertext, readable under the same AUTH_SECRET.
      const apps = await target.$client.query<{ app_id: string; api_key_enc: string; webhook_password_enc: string | null; webhook_use_basic_auth: boolean }>(
        "SELECT app_id, api_key_enc, webhook_password_enc, webhook_use_basic_auth FROM apps ORDER BY pk",
      );
      expect(apps.rows.map((r) => decryptSecret(r.api_key_enc))).toEqual(["key-acme-secret-1234", "key-beta-secret-9999"]);
      expect(decryptSecret(apps.rows[0]!.webhook_password_enc!)).toBe("hook-pass-5678");
      expect(apps.rows.map((r) => r.webhook_use_basic_auth)).toEqual([true, false]);
      // Booleans, grants, revocations and JSON as they were.
      const tokens = await target.$client.query("SELECT name, revoked FROM api_tokens ORDER BY pk");
      expect(tokens.rows).toEqual([{ name: "finance", revoked: false }, { name: "old", revoked: true }]);
      const grants = await target.$client.query("SELECT u.email, a.app_id FROM user_app_grants g JOIN users u ON u.pk = g.user_pk JOIN apps a ON a.pk = g.app_pk");
      expect(grants.rows).toEqual([{ email: "viewer@example.com", app_id: "acme" }]);
      const statement = await target.$client.query<{ body: string }>("SELECT body::text AS body FROM statements");
      const sqliteBody = sqlite.$client.prepare("SELECT body FROM statements").pluck().get() as string;
      expect(statement.rows[0]!.body).toBe(sqliteBody);
      const bodies = await target.$client.query<{ idem_key: string; body: string }>("SELECT idem_key, body FROM webhook_deliveries ORDER BY pk");
      expect(bodies.rows.map((r) => r.body)).toEqual(sqlite.$client.prepare("SELECT body FROM webhook_deliveries ORDER BY pk").pluck().all());

      // pks are kept, and the identity continues after them: a new row gets a fresh pk.
      const added = await target.$client.query<{ pk: string }>("INSERT INTO users (email, password_hash, role, created_ms, updated_ms) VALUES ('new@example.com', 'h', 'viewer', 1, 1) RETURNING pk");
      const maxSqlitePk = sqlite.$client.prepare("SELECT max(pk) FROM users").pluck().get() as number;
      expect(Number(added.rows[0]!.pk)).toBeGreaterThan(maxSqlitePk);

      // A further run finds everything there; the new Postgres row makes the counts differ, and the check says so.
      let mismatch: unknown;
      try {
        await copyStateToPostgres(sqlite, target.$client, { batchSize: 3 });
      } catch (error) {
        mismatch = error;
      }
      expect(mismatch).toBeInstanceOf(StateCopyMismatchError);
      expect((mismatch as Error).message).toContain("users (SQLite 2, Postgres 3)");
    } finally {
      sqlite.$client.close();
      await target.$client.end();
    }
  });

  it("npm run warehouse -- copy --to postgres: migrates, copies, prints the count check, and never prints the password", async () => {
    const file = tempDbFile("copy-cli");
    (await fillSqlite(file)).$client.close();
    const url = await server.createDatabase("copy_cli");
    const run = promisify(execFile);
    const { stdout, stderr } = await run(process.execPath, ["--import", "tsx", "scripts/warehouse.ts", "copy", "--to", "postgres", "--no-progress"], {
      env: { ...process.env, DATABASE_PATH: file, DATABASE_URL: url, CLICKHOUSE_URL: "http://default:x@127.0.0.1:1/callboard", LOG_LEVEL: "silent" },
    });
    expect(stdout).toContain("Count check passed");
    expect(stdout).toMatch(/webhook_deliveries\s+25\s+25\s+25\s+ok/);
    expect(stdout + stderr).not.toContain(server.password);
    expect(stdout + stderr).not.toContain(encodeURIComponent(server.password));
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      expect((await client.query("SELECT email FROM users ORDER BY pk")).rows).toEqual([{ email: "admin@example.com" }, { email: "viewer@example.com" }]);
    } finally {
      await client.end();
    }
  });
  it("the CLIs over DATABASE_URL migrate a fresh Postgres, then add and list the users and tokens every server shares", async () => {
    const url = await server.createDatabase("cli_state");
    const run = promisify(execFile);
    const cli = (file: string, ...args: string[]) =>
      run(process.execPath, ["--import", "tsx", file, ...args], {
        env: { ...process.env, DATABASE_URL: url, CLICKHOUSE_URL: "http://default:x@127.0.0.1:1/callboard", AUTH_SECRET: "s".repeat(32), LOG_LEVEL: "silent" },
      });
    await cli("scripts/users.ts", "add", "--email", "ops@example.com", "--password", "correct horse battery", "--role", "admin");
    const users = JSON.parse((await cli("scripts/users.ts", "list", "--json")).stdout) as Array<{ email: string; role: string }>;
    expect(users.map((u) => [u.email, u.role])).toEqual([["ops@example.com", "admin"]]);
    const created = await cli("scripts/tokens.ts", "create", "--email", "ops@example.com", "--name", "ci");
    const token = created.stdout.trim();
    expect(token.length).toBeGreaterThan(20);
    const tokens = JSON.parse((await cli("scripts/tokens.ts", "list", "--json")).stdout) as Array<{ id: string; name: string }>;
    expect(tokens.map((t) => t.name)).toEqual(["ci"]);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      expect((await client.query("SELECT email FROM users")).rows).toEqual([{ email: "ops@example.com" }]);
      // What a server reads is what the command wrote: the token row is there, its secret part is not.
      const stored = JSON.stringify((await client.query("SELECT * FROM api_tokens")).rows);
      expect(stored).not.toContain(token);
    } finally {
      await client.end();
    }
    expect(created.stderr + created.stdout).not.toContain(server.password);
  });
});
