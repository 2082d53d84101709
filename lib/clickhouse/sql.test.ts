import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseFilters } from "@/lib/analytics";
import { NASTY_UIDS } from "@/lib/emulator/population";
import { openClickHouse, type ClickHouse } from "./client";
import { and, array, integerLiteral, literal, raw, sql, stringLiteral } from "./sql";
import { CLICKHOUSE_SKIP_REASON, startClickHouse, type TestClickHouse } from "./test-clickhouse";
import { openChdb } from "./test-chdb";

/**
 * The one encoder of values into ClickHouse SQL, tried with every kind of input the
 * filter model lets through (parseFilters): each hostile string must come back from the
 * server exactly as sent, on ClickHouse 18.16 and on a current ClickHouse (chdb).
 */

const CONTROL = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).concat("\u007f");
const HOSTILE: string[] = [
  ...NASTY_UIDS,
  ...CONTROL.map((c) => `a${c}b`),
  CONTROL.join(""),
  "'", "''", "\\", "\\\\", "\\'", "'\\", "\\x41", "\\N", "\\0", "\\u0041", "%s", "$1", "?", "{uid:String}", "`", "\"",
  "' OR '1'='1", "x'); DROP TABLE calls; --", "/* comment */", "-- comment", "a\u0000b\u0000", "\u0000",
  "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 🦄👩‍👩‍👧", "e\u0301", "\u202eRTL", "\ufeffBOM", "\u2028\u2029", "x".repeat(256), "é".repeat(256), "🦄".repeat(128),
];

/** Deterministic random strings over every code point class (ASCII controls, BMP, astral). */
function fuzz(n: number): string[] {
  let seed = 42;
  const next = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
  const pool = ["\\", "'", "\"", "\u0000", "\n", "\r", "\t", "a", "Z", "0", " ", "%", "_", "é", "ß", "用", "🦄", "\u0301", "\u007f", "`"];
  return Array.from({ length: n }, () => Array.from({ length: 1 + Math.floor(next() * 24) }, () => pool[Math.floor(next() * pool.length)]).join(""));
}

describe("the SQL encoder", () => {
  it("writes control characters, quotes and backslashes as escapes, everything else as is", () => {
    expect(stringLiteral("o'brien\\")).toBe("'o\\'brien\\\\'");
    expect(stringLiteral("a\u0000b\nc\u007f")).toBe("'a\\x00b\\x0ac\\x7f'");
    expect(stringLiteral("zoë 🦄")).toBe("'zoë 🦄'");
    for (const s of HOSTILE) expect(stringLiteral(s)).not.toMatch(/[\u0000-\u001f\u007f]/);
  });

  it("writes only safe integers as numbers, lists as tuples, booleans as 0/1, null as NULL", () => {
    expect(integerLiteral(253_402_300_799)).toBe("253402300799");
    expect(integerLiteral(-5)).toBe("(-5)");
    for (const bad of [1.5, NaN, Infinity, -Infinity, 2 ** 53]) expect(() => integerLiteral(bad)).toThrow(TypeError);
    expect(literal([1, 2, 3])).toBe("(1, 2, 3)");
    expect(literal(["a'b", "c"])).toBe("('a\\'b', 'c')");
    expect(() => literal([])).toThrow(TypeError);
    expect(sql`x = ${true} AND y = ${false} AND z IS ${null}`.text).toBe("x = 1 AND y = 0 AND z IS NULL");
  });

  it("inserts only code-built fragments verbatim", () => {
    const uid = "x' OR 1=1 --";
    expect(sql`SELECT ${raw("count()")} FROM t WHERE ${and([sql`uid = ${uid}`, undefined])}`.text).toBe("SELECT count() FROM t WHERE (uid = 'x\\' OR 1=1 --')");
    expect(and([]).text).toBe("1");
  });

  it("encodes every value parseFilters can produce", () => {
    const f = parseFilters(new URLSearchParams({ uid: HOSTILE[0], participantsCount: "100000", from: "0", to: "253402300799", page: "1000000000", perPage: "1000", type: "audio", hasRecording: "true" }));
    expect(sql`${f.uid!} ${f.participantsCount!} ${f.from!} ${f.to!} ${f.page} ${f.perPage} ${f.type!} ${f.hasRecording!}`.text).toBe(
      `${stringLiteral(HOSTILE[0])} 100000 0 253402300799 1000000000 1000 'audio' 1`,
    );
  });
});

/** Every string sent comes back exactly (one query per batch of strings). */
async function roundTrip(ch: ClickHouse, strings: string[]): Promise<void> {
  for (let i = 0; i < strings.length; i += 50) {
    const batch = strings.slice(i, i + 50);
    const cols = batch.map((s, k) => sql`${s} AS v${raw(String(k))}`.text).join(", ");
    const [row] = await ch.rows<Record<string, string>>(`SELECT ${cols}`);
    batch.forEach((s, k) => expect(row[`v${k}`], JSON.stringify(s)).toBe(s));
    // And as a value compared in a WHERE, in an IN list and inside has(): what the uid filter does.
    const [hit] = await ch.rows<{ n: number }>(sql`SELECT count() AS n FROM (SELECT arrayJoin(${array(batch)}) AS u) WHERE has(${array(batch)}, u) AND u IN ${batch}`.text);
    expect(hit.n).toBe(batch.length);
  }
  const lone = "\ud800 lone surrogate";
  const [row] = await ch.rows<{ v: string }>(sql`SELECT ${lone} AS v`.text);
  expect(row.v).toBe("\ufffd lone surrogate");
}

describe.skipIf(CLICKHOUSE_SKIP_REASON)("the SQL encoder against ClickHouse 18.16", () => {
  let server: TestClickHouse;
  let ch: ClickHouse;
  beforeAll(async () => {
    server = await startClickHouse();
    ch = openClickHouse(server.config("default"));
  });
  afterAll(async () => {
    await ch?.close();
    await server?.stop();
  });

  it("round-trips every hostile and random string exactly", async () => {
    await roundTrip(ch, [...HOSTILE, ...fuzz(400)]);
  });

  it("round-trips the integer bounds of the filter model", async () => {
    const [row] = await ch.rows<Record<string, number>>(sql`SELECT ${0} AS a, ${253_402_300_799} AS b, ${100_000} AS c, ${-1} AS d, ${1_000_000_000} AS e`.text);
    expect(row).toEqual({ a: 0, b: 253_402_300_799, c: 100_000, d: -1, e: 1_000_000_000 });
  });
});

describe("the SQL encoder against a current ClickHouse (chdb)", () => {
  it("round-trips every hostile and random string exactly", async () => {
    const ch = openChdb("default");
    try {
      await roundTrip(ch, [...HOSTILE, ...fuzz(400)]);
    } finally {
      await ch.close();
    }
  });
});
