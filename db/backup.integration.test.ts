import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { drizzle } from "drizzle-orm/better-sqlite3";
import { migrate } from "drizzle-orm/better-sqlite3/migrator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "@/db/client";
import { addApp, appConnection, getAppById } from "@/lib/apps/registry";
import { verifyPassword } from "@/lib/auth/passwords";
import { createApiToken, resolveApiToken } from "@/lib/auth/tokens";
import { createUser, getUserByEmail } from "@/lib/auth/users";
import { resetEnvForTests } from "@/lib/config/env";
import { decryptSecret } from "@/lib/crypto/secrets";

/**
 * `npm run warehouse -- backup/restore` as an operator runs them (issue 27, item 1): the
 * real CLI, a real warehouse file, and another process writing to it all along.
 */
const SECRET = "backup-suite-secret-0123456789abcdef012345";
const ROOT = process.cwd();
const TSX = path.join(ROOT, "node_modules", ".bin", "tsx");

/** The CLI as a child (asynchronous: this process keeps hearing from the writer meanwhile). */
function cli(args: string[], databasePath: string): Promise<{ status: number | null; out: string }> {
  const child = spawn(TSX, ["scripts/warehouse.ts", ...args], {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: "production", LOG_LEVEL: "warn", DATABASE_PATH: databasePath, AUTH_SECRET: SECRET },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr.on("data", (c: Buffer) => (out += c.toString()));
  return new Promise((resolve) => child.once("close", (status) => resolve({ status, out })));
}

/** A process that writes numbered audit rows, one small transaction each, until killed. */
function startWriter(file: string): { child: ChildProcess; written(): number } {
  const code = `
    const Database = require("better-sqlite3");
    const db = new Database(${JSON.stringify(file)});
    db.pragma("journal_mode = WAL"); db.pragma("busy_timeout = 5000");
    const ins = db.prepare("INSERT INTO audit_log (at_ms, actor_email, action, target) VALUES (?, 'writer', 'load', ?)");
    let i = 0;
    const batch = db.transaction(() => { for (let k = 0; k < 20; k++) { i++; ins.run(Date.now(), String(i)); } });
    const tick = () => { batch(); process.stdout.write(i + "\\n"); setImmediate(tick); };
    tick();`;
  const child = spawn(process.execPath, ["-e", code], { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
  let last = 0;
  child.stdout!.on("data", (c: Buffer) => {
    const lines = c.toString().trim().split("\n");
    last = Number(lines[lines.length - 1]);
  });
  return { child, written: () => last };
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 300 && !check(); i++) await new Promise((r) => setTimeout(r, 50));
  expect(check()).toBe(true);
}

function rows(file: string, sql: string): unknown[] {
  const sqlite = new Database(file, { readonly: true });
  try {
    return sqlite.prepare(sql).all();
  } finally {
    sqlite.close();
  }
}

describe("warehouse backup and restore under write load", () => {
  let dir = "";
  let live = "";
  let token = "";
  let writer: ReturnType<typeof startWriter> | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "callboard-backup-"));
    live = path.join(dir, "live", "warehouse.db");
    process.env.AUTH_SECRET = SECRET;
    resetEnvForTests();
    const db = openDatabase(live);
    addApp(db, { appId: "acme", name: "Acme", region: "us", apiKey: "key-acme-0001", webhookUsername: "hook", webhookPassword: "hook-password" });
    const user = await createUser(db, { email: "reader@callboard.test", password: "reader-password-1", role: "viewer", apps: ["acme"] });
    token = (await createApiToken(db, { userId: user.id, name: "reports" })).token;
    // Bulk, so that the copy takes many steps of the backup API while the writer writes.
    const bulk = db.$client.prepare("INSERT INTO audit_log (at_ms, actor_email, action, target, details) VALUES (?, 'seed', 'bulk', ?, ?)");
    db.$client.transaction(() => {
      for (let i = 0; i < 40_000; i++) bulk.run(i, String(i), JSON.stringify({ pad: "x".repeat(400) }));
    })();
    db.$client.close();
    writer = startWriter(live);
    await until(() => writer!.written() > 200);
  }, 60_000);

  afterAll(() => {
    writer?.child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  it("backs up while another process writes, restores into a fresh place, and every row, token and secret works", async () => {
    const backup = path.join(dir, "backups", "nightly.db");
    const before = writer!.written();
    const made = await cli(["backup", backup], live);
    expect(made.out).toContain("integrity check ok");
    expect(made.out).toContain("Keep AUTH_SECRET with it");
    expect(made.status).toBe(0);
    // The writer went on writing during the copy, and the copy is an instant of it.
    expect(writer!.written()).toBeGreaterThan(before);
    expect(existsSync(`${backup}.partial`)).toBe(false);
    expect(rows(backup, "PRAGMA integrity_check")).toEqual([{ integrity_check: "ok" }]);
    expect(rows(backup, "PRAGMA journal_mode")).toEqual([{ journal_mode: "delete" }]); // one self-contained file

    // A consistent snapshot: the writer's rows form an unbroken run 1..k, none half-written.
    const load = rows(backup, "SELECT count(*) AS n, min(CAST(target AS INTEGER)) AS lo, max(CAST(target AS INTEGER)) AS hi FROM audit_log WHERE action = 'load'")[0] as { n: number; lo: number; hi: number };
    expect(load.lo).toBe(1);
    expect(load.hi).toBe(load.n);
    expect(load.n % 20).toBe(0);
    expect(load.n).toBeGreaterThanOrEqual(before);
    expect(load.n).toBeLessThan(writer!.written());
    expect(rows(backup, "SELECT count(*) AS n FROM audit_log WHERE action = 'bulk'")).toEqual([{ n: 40_000 }]);

    // Never overwrites a backup.
    const again = await cli(["backup", backup], live);
    expect(again.status).toBe(1);
    expect(again.out).toContain("exists already");

    // Restore into a fresh place (a new machine), while the old warehouse keeps running.
    const fresh = path.join(dir, "fresh", "warehouse.db");
    cpSync(backup, path.join(dir, "backup-as-made.db"));
    const restored = await cli(["restore", backup], fresh);
    expect(restored.out).toContain(`Restored ${backup}`);
    expect(restored.status).toBe(0);
    for (const table of ["users", "user_app_grants", "api_tokens", "apps", "audit_log"]) {
      expect(rows(fresh, `SELECT * FROM ${table} ORDER BY 1`)).toEqual(rows(path.join(dir, "backup-as-made.db"), `SELECT * FROM ${table} ORDER BY 1`));
    }
    process.env.AUTH_SECRET = SECRET;
    resetEnvForTests();
    const db = openDatabase(fresh);
    try {
      expect(await resolveApiToken(db, token)).not.toBeNull();
      const user = (await getUserByEmail(db, "reader@callboard.test"))!;
      expect(await verifyPassword(user.passwordHash, "reader-password-1")).toBe(true);
      const app = getAppById(db, "acme")!;
      expect(appConnection(app, "example.com").apiKey).toBe("key-acme-0001");
      expect(decryptSecret(app.webhookPasswordEnc!)).toBe("hook-password");
    } finally {
      db.$client.close();
    }
  });

  it("refuses to restore over a warehouse another process has open, and leaves it as it was", async () => {
    const backup = path.join(dir, "backups", "for-refusal.db");
    expect((await cli(["backup", backup], live)).status).toBe(0);
    const before = writer!.written();
    const refused = await cli(["restore", backup], live);
    expect(refused.status).toBe(1);
    expect(refused.out).toContain("is open in another process");
    expect(existsSync(`${live}.restoring`)).toBe(false);
    const after = rows(live, "SELECT max(CAST(target AS INTEGER)) AS hi FROM audit_log WHERE action = 'load'")[0] as { hi: number };
    expect(after.hi).toBeGreaterThanOrEqual(before); // the live file is the writer's, not the backup
  });

  it("restores over a stopped warehouse and keeps the one it replaced beside it", async () => {
    const backup = path.join(dir, "backups", "before-stop.db");
    expect((await cli(["backup", backup], live)).status).toBe(0);
    writer!.child.kill("SIGKILL"); // a crashed server leaves no stale lock behind
    await new Promise((r) => writer!.child.once("exit", r));
    const lastWritten = rows(live, "SELECT count(*) AS n FROM audit_log WHERE action = 'load'")[0] as { n: number };
    const done = await cli(["restore", backup], live);
    expect(done.status).toBe(0);
    const previous = /kept as (\S+)\.$/m.exec(done.out)?.[1];
    expect(previous).toBeDefined();
    expect(rows(previous!, "SELECT count(*) AS n FROM audit_log WHERE action = 'load'")).toEqual([lastWritten]);
    expect(rows(live, "SELECT count(*) AS n FROM audit_log WHERE action = 'load'")).toEqual(rows(backup, "SELECT count(*) AS n FROM audit_log WHERE action = 'load'"));
  });

  it("refuses a file that is not a warehouse", async () => {
    const junk = path.join(dir, "junk.db");
    writeFileSync(junk, "not a database at all, but long enough to be read as one ".repeat(100));
    const r = await cli(["restore", junk], path.join(dir, "other", "warehouse.db"));
    expect(r.status).toBe(1);
    expect(r.out).toMatch(/not a database|integrity|not a Callboard warehouse/i);
  });
});

describe("a copy beside the warehouse before a migration changes it", () => {
  it("keeps <file>.before-<migration>.bak holding the data as it was, unless turned off", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "callboard-premigrate-"));
    try {
      // A warehouse of the previous version: every migration but the last one applied.
      const older = path.join(dir, "migrations");
      cpSync(path.join(ROOT, "db", "migrations"), older, { recursive: true });
      const journalFile = path.join(older, "meta", "_journal.json");
      const journal = JSON.parse(readFileSync(journalFile, "utf8")) as { entries: Array<{ tag: string }> };
      const newest = journal.entries.pop()!;
      writeFileSync(journalFile, JSON.stringify(journal));
      const make = (name: string) => {
        const file = path.join(dir, name);
        const sqlite = new Database(file);
        sqlite.pragma("journal_mode = WAL");
        migrate(drizzle(sqlite), { migrationsFolder: older });
        sqlite.prepare("INSERT INTO audit_log (at_ms, actor_email, action) VALUES (1, 'old', 'kept')").run();
        sqlite.close();
        return file;
      };

      const file = make("warehouse.db");
      openDatabase(file).$client.close();
      const copy = `${file}.before-${newest.tag}.bak`;
      expect(existsSync(copy)).toBe(true);
      expect(rows(copy, "SELECT actor_email FROM audit_log")).toEqual([{ actor_email: "old" }]);
      expect(rows(copy, "SELECT count(*) AS n FROM __drizzle_migrations")).toEqual([{ n: journal.entries.length }]);
      expect(rows(file, "SELECT count(*) AS n FROM __drizzle_migrations")).toEqual([{ n: journal.entries.length + 1 }]);
      // Up to date: no second copy at the next start.
      rmSync(copy);
      openDatabase(file).$client.close();
      expect(existsSync(copy)).toBe(false);

      const skipped = make("skipped.db");
      openDatabase(skipped, { backupBeforeMigration: false }).$client.close();
      expect(existsSync(`${skipped}.before-${newest.tag}.bak`)).toBe(false);
      // A new file holds nothing to keep.
      openDatabase(path.join(dir, "new.db")).$client.close();
      expect(existsSync(path.join(dir, `new.db.before-${newest.tag}.bak`))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
