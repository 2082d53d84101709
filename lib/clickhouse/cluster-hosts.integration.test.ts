import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "@/db/client";
import { SKIP_WITHOUT_BUILD, startTestServer, type TestServer } from "@/lib/server/test-server";
import { openClickHouse, type ClickHouse } from "./client";
import { forHost } from "./config";
import { migrateClickHouse } from "./migrate";
import { MIGRATED_TABLES } from "./migrations";
import { CLICKHOUSE_SKIP_REASON, startClickHouse, type TestClickHouse } from "./test-clickhouse";

/**
 * Issue 25, item 4: migrations reach every shard `system.clusters` lists, or stop with an
 * error naming the one they cannot reach and how to configure the cluster; `/api/health`
 * names a shard without its tables. On real two-shard clusters: one laid out as real
 * clusters are (a host per shard, same ports), one with both shards on 127.0.0.1 on ports
 * of their own (what `npm run db:migrate` once called "Migrated" after creating the tables
 * on the first shard only).
 */
const SECRET = "cluster-hosts-suite-secret-0123456789abcdef";
const ROOT = path.resolve(__dirname, "..", "..");

/** `npm run db:migrate` as a user runs it: exit code and output. */
function runMigrate(env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(ROOT, "node_modules", ".bin", "tsx"), ["scripts/migrate.ts"], {
      cwd: ROOT,
      env: { ...process.env, AUTH_SECRET: SECRET, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (out += c.toString()));
    child.once("error", reject);
    child.once("exit", (code) => resolve({ code, out }));
  });
}

const tablesIn = async (c: ClickHouse, database: string) =>
  (await c.rows<{ name: string }>(`SELECT name FROM system.tables WHERE database = '${database}' ORDER BY name`)).map((r) => r.name);

describe.skipIf(CLICKHOUSE_SKIP_REASON)("two shards on one host, on ports of their own", () => {
  let ch: TestClickHouse;
  let dir = "";
  const DB = "callboard_same_host";

  beforeAll(async () => {
    ch = await startClickHouse({ shards: 2, sameHost: true });
    dir = mkdtempSync(path.join(tmpdir(), "callboard-cluster-hosts-"));
  });
  afterAll(async () => {
    await ch?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("are refused by the migration, naming the shard it cannot reach and how to configure it, before any table is created", async () => {
    const [first, second] = ch.servers;
    expect(first.host).toBe(second.host);
    const error = await migrateClickHouse(ch.config(DB)).then(() => undefined, (e: unknown) => e as Error);
    expect(error?.message).toContain(`shard 2, replica 1 (127.0.0.1:${second.tcpPort} in remote_servers of cluster "${ch.cluster}")`);
    expect(error?.message).toContain("another server answers there");
    expect(error?.message).toContain(`with http_port ${first.httpPort}`);
    expect(error?.message).not.toContain(ch.password);
    // Checked before any change: not even the first shard got its tables.
    const boot = openClickHouse(ch.config(DB), { noDatabase: true });
    try {
      expect(await tablesIn(boot, DB)).toEqual([]);
    } finally {
      await boot.close();
    }
  });

  it("make `npm run db:migrate` exit non-zero with that message instead of saying Migrated", async () => {
    const r = await runMigrate({ ...ch.env(DB), DATABASE_PATH: path.join(dir, "warehouse.db") });
    expect(r.code).toBe(1);
    expect(r.out).toContain("cannot be reached: another server answers there");
    expect(r.out).toContain(`127.0.0.1:${ch.servers[1].tcpPort}`);
    expect(r.out).not.toContain("Migrated ClickHouse");
    expect(r.out).not.toContain(ch.password);
  }, 60_000);
});

describe.skipIf(CLICKHOUSE_SKIP_REASON)("a cluster with a host per shard", () => {
  let ch: TestClickHouse;
  const DB = "callboard_host_per_shard";
  const shardClient = (i: number) => openClickHouse(forHost(ch.config(DB), ch.servers[i].host), { noDatabase: true });

  beforeAll(async () => {
    ch = await startClickHouse({ shards: 2 });
  });
  afterAll(async () => {
    await ch?.stop();
  });

  it("gets the tables on both shards", async () => {
    const report = await migrateClickHouse(ch.config(DB));
    expect(report.hosts).toHaveLength(2);
    for (const i of [0, 1]) {
      const c = shardClient(i);
      try {
        expect(await tablesIn(c, DB)).toEqual(expect.arrayContaining(MIGRATED_TABLES.map((t) => `${t}_local`)));
      } finally {
        await c.close();
      }
    }
  });

  describe.skipIf(SKIP_WITHOUT_BUILD)("and the production server's /api/health", () => {
    let app: TestServer;
    let dir = "";
    const health = async () => {
      const res = await fetch(`${app.base}/api/health`);
      const text = await res.text();
      return { status: res.status, text, body: JSON.parse(text) as { status: string; clickhouse?: string; shards?: unknown } };
    };

    beforeAll(async () => {
      dir = mkdtempSync(path.join(tmpdir(), "callboard-cluster-health-"));
      const file = path.join(dir, "warehouse.db");
      openDatabase(file).$client.close();
      app = await startTestServer({ env: { ...ch.env(DB), DATABASE_PATH: file, AUTH_SECRET: SECRET } });
    }, 120_000);
    afterAll(async () => {
      await app?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it("lists every shard with its tables", async () => {
      const h = await health();
      expect(h.status).toBe(200);
      expect(h.body.clickhouse).toBe("ok");
      expect(h.body.shards).toEqual([{ shard: 1, replica: 1, tables: "ok" }, { shard: 2, replica: 1, tables: "ok" }]);
    });

    it("names a shard without tables (503, no address or password), and is well again after npm run db:migrate", async () => {
      // A shard as one added to remote_servers after the last migration, or wiped, is: no warehouse database at all.
      const second = shardClient(1);
      try {
        await second.command(`DROP DATABASE ${DB}`);
      } finally {
        await second.close();
      }
      const h = await health();
      expect(h.status).toBe(503);
      expect(h.body).toMatchObject({ status: "unavailable", clickhouse: "unreadable", shards: [{ shard: 1, replica: 1, tables: "ok" }, { shard: 2, replica: 1, tables: "missing" }] });
      expect(h.text).not.toContain(ch.password);
      expect(h.text).not.toContain("127.0.0.");
      const r = await runMigrate({ ...ch.env(DB), DATABASE_PATH: path.join(dir, "warehouse.db") });
      expect(r.code).toBe(0);
      expect(r.out).toContain("Migrated ClickHouse");
      const after = await health();
      expect(after.status).toBe(200);
      expect(after.body.shards).toEqual([{ shard: 1, replica: 1, tables: "ok" }, { shard: 2, replica: 1, tables: "ok" }]);
    }, 60_000);

    it("names a shard that stopped answering", async () => {
      await ch.kill(1);
      const h = await health();
      expect(h.status).toBe(503);
      expect(h.body.shards).toEqual([{ shard: 1, replica: 1, tables: "ok" }, { shard: 2, replica: 1, tables: "unreachable" }]);
    }, 30_000);
  });
});
