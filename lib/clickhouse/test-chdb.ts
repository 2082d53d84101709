import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Session } from "chdb";
import { ClickHouseError, type ClickHouse } from "./client";

/**
 * The warehouse's ClickHouse interface over chdb (a current ClickHouse embedded in the
 * process; a devDependency, tests only): the same DDL and queries that run on the
 * servers run here too, proving them valid on a modern ClickHouse. One server, no
 * cluster (chdb has no network side).
 */
export function openChdb(database: string): ClickHouse & { dir: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), "callboard-chdb-"));
  const session = new Session(dir);
  const settings = " SETTINGS output_format_json_quote_64bit_integers = 0";
  const run = (sql: string, format: string): string => {
    try {
      return session.query(sql, format);
    } catch (err) {
      throw new ClickHouseError(`chdb: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
  const parse = <T>(text: string): T[] =>
    text
      .split("\n")
      .filter((l) => l.length > 0)
      .map((l) => JSON.parse(l) as T);
  return {
    dir,
    label: `chdb:${dir}`,
    placement: { database, cluster: undefined },
    async command(sql) {
      run(sql, "TSV");
    },
    async rows<T>(sql: string) {
      return parse<T>(run(sql + settings, "JSONEachRow"));
    },
    async *stream<T>(sql: string) {
      for (const row of parse<T>(run(sql + settings, "JSONEachRow"))) yield row;
    },
    async *streamRowBinary(sql: string) {
      try {
        yield (await session.queryAsync(sql, { format: "RowBinary" })).bytes();
      } catch (err) {
        throw new ClickHouseError(`chdb: ${err instanceof Error ? err.message : String(err)}`);
      }
    },
    async insert(table, rows) {
      if (rows.length === 0) return;
      const body = rows.map((r) => JSON.stringify(r)).join("\n");
      run(`INSERT INTO \`${database}\`.\`${table}\` FORMAT JSONEachRow\n${body}`, "TSV");
    },
    async insertStream(table, body, options = {}) {
      // The query text carries the data here: text formats only.
      if ((options.format ?? "JSONEachRow") !== "JSONEachRow") throw new ClickHouseError(`chdb twin: ${options.format} inserts are not supported`);
      const chunks: Buffer[] = [];
      for await (const c of body) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(String(c)));
      const text = Buffer.concat(chunks).toString("utf8").trimEnd();
      if (text) run(`INSERT INTO \`${database}\`.\`${table}\` FORMAT JSONEachRow\n${text}`, "TSV");
    },
    async close() {
      session.cleanup();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
