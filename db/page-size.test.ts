/**
 * A new warehouse file gets 16 KB pages (decision 0025); a file made before keeps its own
 * size and migrates, syncs and checkpoints as before: SQLite sets a page size only while
 * a file is empty, and the write worker's checkpoint interval is counted in bytes.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { NEW_FILE_PAGE_SIZE, openDatabase } from "@/db/client";
import { tuneForBackfill } from "@/lib/sync/writer";

const dir = mkdtempSync(path.join(tmpdir(), "callboard-page-size-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const pragma = (db: Database.Database, name: string) => db.pragma(name, { simple: true }) as number;

describe("a warehouse file's page size", () => {
  it("is 16 KB for a new file, and the write worker checkpoints every 64 MB of it", () => {
    const db = openDatabase(path.join(dir, "new.db"));
    try {
      expect(NEW_FILE_PAGE_SIZE).toBe(16_384);
      expect(pragma(db.$client, "page_size")).toBe(16_384);
      expect(db.$client.pragma("journal_mode", { simple: true })).toBe("wal");
      tuneForBackfill(db.$client);
      expect(pragma(db.$client, "wal_autocheckpoint")).toBe(4096);
    } finally {
      db.$client.close();
    }
  });

  it("stays as it was for a file made before, which still migrates and takes writes", () => {
    const file = path.join(dir, "old.db");
    const old = new Database(file);
    old.pragma("page_size = 4096");
    old.pragma("journal_mode = WAL");
    old.exec("CREATE TABLE kept (x)");
    old.prepare("INSERT INTO kept VALUES (1)").run();
    old.close();

    const db = openDatabase(file);
    try {
      expect(pragma(db.$client, "page_size")).toBe(4096);
      const tables = db.$client.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all();
      expect(tables).toEqual(expect.arrayContaining(["kept", "calls", "call_participants", "analytics_changes"]));
      tuneForBackfill(db.$client);
      expect(pragma(db.$client, "wal_autocheckpoint")).toBe(16_384);
    } finally {
      db.$client.close();
    }
    const again = new Database(file, { readonly: true });
    expect(pragma(again, "page_size")).toBe(4096);
    again.close();
  });
});
