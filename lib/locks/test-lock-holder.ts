/**
 * Test fixture: another process holding the warehouse's write lock, as a long `sqlite3`
 * session or a backup tool would. Env: DB_FILE. Reads commands on stdin, one a line:
 * `lock` (BEGIN IMMEDIATE, answers `locked`), `release` (COMMIT, answers `released`).
 * Exits when stdin closes.
 */
import { createInterface } from "node:readline";
import Database from "better-sqlite3";

const db = new Database(process.env.DB_FILE ?? "");
db.pragma("busy_timeout = 30000");
const lines = createInterface({ input: process.stdin });
lines.on("line", (cmd) => {
  if (cmd === "lock") {
    db.exec("BEGIN IMMEDIATE");
    process.stdout.write("locked\n");
  } else if (cmd === "release") {
    db.exec("COMMIT");
    process.stdout.write("released\n");
  }
});
lines.on("close", () => {
  if (db.inTransaction) db.exec("ROLLBACK");
  db.close();
});
