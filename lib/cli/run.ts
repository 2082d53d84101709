import { CommanderError } from "commander";
import { closeDb } from "@/db/client";
import { closePostgresState, prepareState } from "@/db";
import { env, EnvError } from "@/lib/config/env";

/**
 * Runs a CLI action: a known error prints one clear line and exits 1; the database is
 * closed either way so WAL checkpoints happen. With DATABASE_URL the Postgres state is
 * migrated first (under its advisory lock, as a server does at start), so a command on a
 * fresh Postgres works and one that cannot reach it names the redacted address; its pool
 * is closed at the end so the command exits at once.
 */
export async function runCli(action: () => Promise<number | void> | number | void): Promise<void> {
  let code = 0;
  try {
    if (env().DATABASE_URL !== undefined) await prepareState();
    code = (await action()) ?? 0;
  } catch (error) {
    code = 1;
    if (error instanceof CommanderError) code = error.exitCode || 1;
    else if (error instanceof EnvError) console.error(error.message);
    else console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    closeDb();
    await closePostgresState();
  }
  process.exitCode = code;
}

/** Prints rows as an aligned text table. */
export function printTable(rows: Array<Record<string, unknown>>): void {
  if (rows.length === 0) return;
  const cols = Object.keys(rows[0]!);
  const cell = (v: unknown) => (v === null || v === undefined ? "" : String(v));
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  console.log(cols.map((c, i) => c.padEnd(widths[i]!)).join("  "));
  for (const r of rows) console.log(cols.map((c, i) => cell(r[c]).padEnd(widths[i]!)).join("  "));
}
