import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { migrate } from "drizzle-orm/better-sqlite3/migrator";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "@/db/client";
import { CALL_RAW_COLUMNS } from "../../../csv-columns";
import { csvRawStream } from "@/lib/export/csv";
import { callsOrder } from "./calls";
import { callsCsvBatches, storeRows } from "./calls-csv";
import { textRowsPlan } from "./calls-csv-reader";
import * as A from "../direct";
import { openFixtureDb, randomCall, rng, writeCalls } from "../../../test-fixtures";

/**
 * The calls CSV reads its seven SQLite columns through the narrow index of migration 0021
 * (docs/decisions/0028), not the wide rows: the plan says so, and the bytes are those of
 * an independent rendering (plain SQL over the table, csvRawStream's cells) whatever the
 * rows hold — big raw records, values changed after the store's snapshot, calls deleted
 * in the middle of the export, dims the store only knows as "other" — and on a file that
 * has no such index.
 */

type Db = ReturnType<typeof openDatabase>;

/** A copy of the migrations folder whose journal ends at `lastTag`: the migrator of an older release. */
function migrationsUpTo(lastTag: string): string {
  const folder = mkdtempSync(path.join(tmpdir(), "callboard-migrations-"));
  cpSync(path.join(process.cwd(), "db", "migrations"), folder, { recursive: true });
  const journalFile = path.join(folder, "meta", "_journal.json");
  const journal = JSON.parse(readFileSync(journalFile, "utf8")) as { entries: { tag: string }[] };
  const end = journal.entries.findIndex((e) => e.tag === lastTag);
  if (end < 0) throw new Error(`no migration ${lastTag}`);
  journal.entries = journal.entries.slice(0, end + 1);
  writeFileSync(journalFile, JSON.stringify(journal));
  return folder;
}
const ALL = { appPks: "all" as const };
const base = Date.UTC(2025, 5, 1) / 1000;

/** The old SQL's CSV of `pks` in that order, each call as the table holds it now (deleted ones left out). */
async function independentCsv(db: Db, pks: ArrayLike<number>): Promise<string> {
  const stmt = db.$client
    .prepare(`SELECT a.app_id, c.session_id, c.type, c.mode, c.status, c.initiator, c.receiver, c.receiver_type, c.initiated_at, c.started_at,
        c.ended_at, c.start_at, c.has_recording, c.total_audio_minutes, c.total_video_minutes, c.total_duration_minutes,
        c.duration_seconds, c.total_participants FROM calls c NOT INDEXED JOIN apps a ON a.pk = c.app_pk WHERE c.pk = ?`)
    .raw();
  const rows = Array.from(pks, (pk) => stmt.get(pk) as unknown[] | undefined).filter((r) => r !== undefined);
  return new Response(csvRawStream([rows], CALL_RAW_COLUMNS)).text();
}

const csvText = (batches: ReturnType<typeof callsCsvBatches>) => new Response(csvRawStream(batches, CALL_RAW_COLUMNS)).text();

/** A warehouse of 5,000 calls in time order, some with raw records far larger than a page, and text the CSV quotes. */
function warehouse(name: string): { db: Db; writer: Db } {
  const db = openFixtureDb(name);
  const writer = openDatabase(db.$client.name);
  const r = rng(41);
  writeCalls(writer, Array.from({ length: 5000 }, (_, i) => randomCall(r, i, base, 20 * 86_400)).sort((a, b) => a.initiatedAt - b.initiatedAt));
  const w = writer.$client;
  w.prepare("UPDATE calls SET raw = ? WHERE pk % 3 = 0").run(JSON.stringify({ participants: Array.from({ length: 40 }, (_, i) => ({ uid: `u${i}`, deviceId: "d".repeat(120) })) }));
  w.prepare("UPDATE calls SET raw = ? WHERE pk % 7 = 0").run("x".repeat(40_000)); // overflow pages
  w.exec(`UPDATE calls SET initiator = '=1+1', receiver = 'a,"b"' WHERE pk % 11 = 0;
    UPDATE calls SET initiator = NULL, receiver = 'zoë 用户' WHERE pk % 13 = 0;
    UPDATE calls SET type = NULL WHERE pk % 17 = 0; UPDATE calls SET status = 'weird' WHERE pk % 19 = 0`);
  return { db, writer };
}

describe("calls CSV text columns through their index", () => {
  const { db, writer } = warehouse("calls-csv-index");
  afterAll(() => {
    writer.$client.close();
    db.$client.close();
  });

  it("reads by pk from the covering index, on the process's connection and on an export's read-only one", () => {
    expect(textRowsPlan(db.$client).join(" | ")).toContain("COVERING INDEX calls_csv_text_idx");
    const own = openDatabase(db.$client.name, { readonly: true, migrate: false });
    try {
      expect(textRowsPlan(own.$client).join(" | ")).toContain("COVERING INDEX calls_csv_text_idx");
    } finally {
      own.$client.close();
    }
  });

  it("writes the independent rendering's bytes, with calls changed and deleted after the store's snapshot", async () => {
    let k = 0;
    for (const f of [A.filters(), A.filters({ order: "asc", type: "video" }), A.filters({ sort: "minutes" })]) {
      expect(await csvText(callsCsvBatches(db, f, ALL)), JSON.stringify(f)).toBe(await independentCsv(db, callsOrder(db, f, ALL)));
      const pks = callsOrder(db, f, ALL); // the store's snapshot: not caught up below
      // After it: text and times changed (the index follows the table), calls deleted, session ids changed.
      k++;
      writer.$client.exec(`UPDATE calls SET initiator = 'later ${k} ' || pk, ended_at = ended_at + 7, total_duration_minutes = 1.0005 WHERE pk % 5 = ${k};
        DELETE FROM calls WHERE pk % 23 = ${k}; UPDATE calls SET session_id = session_id || '-${k}' WHERE pk % 29 = ${k}`);
      const want = await independentCsv(db, pks);
      expect(want, JSON.stringify(f)).toContain(`later ${k} `);
      expect(await csvText(callsCsvBatches(db, f, ALL, pks, async (p) => storeRows(db, p))), JSON.stringify(f)).toBe(want);
    }
  });

  it("reads through the table, with the same bytes, on a file without the index", async () => {
    const { db: old, writer: oldWriter } = warehouse("calls-csv-no-index");
    try {
      oldWriter.$client.exec("DROP INDEX calls_csv_text_idx");
      // A connection opened after the drop (each connection prepares its own statement).
      const reading = openDatabase(old.$client.name, { readonly: true, migrate: false });
      try {
        expect(textRowsPlan(reading.$client).join(" | ")).toContain("INTEGER PRIMARY KEY");
      } finally {
        reading.$client.close();
      }
      const fresh = openDatabase(old.$client.name, { migrate: false });
      try {
        const f = A.filters({ sort: "duration", order: "asc" });
        const pks = callsOrder(fresh, f, ALL);
        expect(await csvText(callsCsvBatches(fresh, f, ALL, pks, async (p) => storeRows(fresh, p)))).toBe(await independentCsv(fresh, pks));
      } finally {
        fresh.$client.close();
      }
    } finally {
      oldWriter.$client.close();
      old.$client.close();
    }
  });

  it("is built over the calls already stored when a warehouse migrates to it", () => {
    const { db: file, writer: w } = warehouse("calls-csv-migrate");
    try {
      w.$client.exec("DROP INDEX calls_csv_text_idx");
      // As before migration 0021: its record (and those of later migrations) gone, the
      // migrator of a release that ends at 0021 applies it to the stored calls.
      w.$client.exec("DELETE FROM __drizzle_migrations WHERE created_at >= 1795400021000");
      const reopened = openDatabase(file.$client.name, { migrate: false });
      try {
        migrate(reopened, { migrationsFolder: migrationsUpTo("0021_calls_csv_text_index") });
        const s = reopened.$client;
        const count = s.prepare("SELECT count(*) FROM calls").pluck().get();
        expect(count).toBe(5000);
        expect(s.prepare("SELECT count(*) FROM calls INDEXED BY calls_csv_text_idx WHERE pk > 0").pluck().get()).toBe(count);
        expect(s.prepare("PRAGMA integrity_check").pluck().get()).toBe("ok");
      } finally {
        reopened.$client.close();
      }
    } finally {
      w.$client.close();
      file.$client.close();
    }
  });
});
