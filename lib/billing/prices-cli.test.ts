import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

/** `npm run prices` as a person runs it: a real process on its own SQLite file. */
process.env.AUTH_SECRET ??= "integration-test-secret-at-least-32-characters";
const { tempDbFile } = await import("@/lib/analytics/test-fixtures");
const { openDatabase } = await import("@/db/client");
const { addApp } = await import("@/lib/apps/registry");
const { listAudit } = await import("@/lib/auth/audit");
const { listPriceSheets } = await import("./price-sheets");

const file = tempDbFile("prices-cli");
const db = openDatabase(file);
addApp(db, { appId: "acme", name: "Acme", region: "eu", apiKey: "key-acme-1234" });

const run = promisify(execFile);
async function prices(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ["--import", "tsx", "scripts/prices.ts", ...args], {
      env: { ...process.env, DATABASE_PATH: file, LOG_LEVEL: "silent" },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

afterAll(() => db.$client.close());

describe("npm run prices", () => {
  it("sets, lists and removes sheets, each audited; bad input exits 1 with the field named", async () => {
    const set = await prices("set", "--default", "--from", "2026-01", "--currency", "usd", "--audio", "0.0040", "--video", "0.01", "--recording", "0.05");
    expect(set).toMatchObject({ code: 0 });
    expect(set.stdout).toContain("Set prices of the account default from 2026-01: USD 0.004/audio min");
    expect((await prices("set", "--app", "acme", "--from", "2026-07", "--currency", "EUR", "--audio", "0.0035", "--video", "0.009", "--recording", "0.04", "--included-minutes", "1000", "--minimum", "50"))
      .code).toBe(0);

    const listed = JSON.parse((await prices("list", "--json")).stdout) as Array<Record<string, unknown>>;
    expect(listed.map((s) => [s.app, s.effectiveMonth, s.currency, s.includedMinutes, s.monthlyMinimum])).toEqual([
      [null, "2026-01", "USD", "0", "0.00"],
      ["acme", "2026-07", "EUR", "1000", "50.00"],
    ]);
    expect(listPriceSheets(db)).toHaveLength(2);

    for (const [args, message] of [
      [["set", "--default", "--from", "2026-13", "--currency", "USD", "--audio", "1", "--video", "1", "--recording", "1"], /effectiveMonth: "2026-13" is not a month/],
      [["set", "--default", "--from", "2026-02", "--currency", "JPY", "--audio", "1", "--video", "1", "--recording", "1", "--minimum", "10.5"], /monthlyMinimum/],
      [["set", "--default", "--from", "2026-02", "--currency", "USD", "--audio", "-1", "--video", "1", "--recording", "1"], /audioPerMinute/],
      [["set", "--app", "nope", "--from", "2026-02", "--currency", "USD", "--audio", "1", "--video", "1", "--recording", "1"], /app "nope" not found/],
      [["set", "--from", "2026-02", "--currency", "USD", "--audio", "1", "--video", "1", "--recording", "1"], /--app ID .* or --default/],
      [["remove", "--default", "--from", "2025-01"], /no price sheet/],
    ] as Array<[string[], RegExp]>) {
      const r = await prices(...args);
      expect(r.code, args.join(" ")).toBe(1);
      expect(r.stderr, args.join(" ")).toMatch(message);
    }
    expect(listPriceSheets(db)).toHaveLength(2);

    expect((await prices("remove", "--app", "acme", "--from", "2026-07")).code).toBe(0);
    expect(listPriceSheets(db).map((s) => s.app)).toEqual([null]);
    expect((await listAudit(db)).map((e) => [e.action, e.actor, e.target])).toEqual([
      ["price.remove", "cli", "acme"],
      ["price.set", "cli", "acme"],
      ["price.set", "cli", "default"],
    ]);
  }, 120_000);
});
