import { parse } from "csv-parse/sync";
import { describe, expect, it } from "vitest";
import { csvCell, csvContext, csvRawStream, csvStream, isoColumn, labelColumn, neutralise, rawDerived } from "./csv";

interface Row { uid: string; minutes: number; n: number | null }
const columns = [{ key: "uid" as const }, { key: "minutes" as const, kind: "decimal" as const }, { key: "n" as const }];

async function text(stream: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(stream).text();
}

describe("csv", () => {
  it("neutralises formula cells and fixes decimals", () => {
    for (const v of ["=1+1", "+1", "-1", "@a", "\tx", "\rx"]) expect(neutralise(v)).toBe(`'${v}`);
    expect(neutralise("a=b")).toBe("a=b");
    expect(csvCell(1 / 3, "decimal")).toBe("0.333");
    expect(csvCell(2, "decimal")).toBe("2.000");
    expect(csvCell(null)).toBe("");
    expect(csvCell(-5)).toBe("-5");
    // Exact decimal text (money) stays a number; anything else in such a column is still neutralised.
    expect(csvCell("-4.50", "exact")).toBe("-4.50");
    expect(csvCell("-4.50")).toBe("'-4.50");
    expect(csvCell("-1+1", "exact")).toBe("'-1+1");
    expect(csvCell("=SUM(A1)", "exact")).toBe("'=SUM(A1)");
  });

  it("round-trips hostile values through a CSV parser", async () => {
    const rows: Row[] = ["a,b", 'say "hi"', "line\nbreak", "zoë 用户42 🦄", "=cmd|' /C calc'!A0", "plain"].map((uid, i) => ({ uid, minutes: i / 7, n: i % 2 ? null : i }));
    const out = parse(await text(csvStream(rows, columns)), { columns: true }) as Array<Record<string, string>>;
    expect(out).toEqual(rows.map((r) => ({ uid: neutralise(r.uid), minutes: r.minutes.toFixed(3), n: r.n === null ? "" : String(r.n) })));
  });

  it("writes the header for an empty result", async () => {
    expect(await text(csvStream([] as Row[], columns))).toBe("uid,minutes,n\r\n");
  });

  it("pulls rows only as the reader asks, and stops on abort", async () => {
    let produced = 0;
    let closed = false;
    function* rows(): Generator<Row> {
      try {
        for (let i = 0; i < 1_000_000; i++) {
          produced++;
          yield { uid: `u${i}`, minutes: i, n: i };
        }
      } finally {
        closed = true;
      }
    }
    const ac = new AbortController();
    const reader = csvStream(rows(), columns, ac.signal).getReader();
    await reader.read();
    await reader.read();
    expect(produced).toBeLessThan(5_000);
    ac.abort();
    expect(closed).toBe(true);
    await reader.cancel();
    expect(produced).toBeLessThan(5_000);
  });
});

describe("raw csv", () => {
  it("writes the same bytes as csv-stringify, neutralised, decimals fixed", async () => {
    const { stringify } = await import("csv-stringify/sync");
    const { csvRawStream, fixed3 } = await import("./csv");
    const hostile = ["a,b", 'say "hi"', "line\nbreak", "cr\rx", "zoë 用户42 🦄", "=cmd|' /C calc'!A0", "+1", "-x", "@h", "\tt", "plain", ""];
    const rows = hostile.map((uid, i) => [uid, i / 7 - 0.5, i % 2, i % 3 ? null : i * 1000]);
    const cols = [{ header: "uid" }, { header: "minutes", kind: "decimal" as const }, { header: "rec", kind: "boolean" as const }, { header: "n" }];
    const got = await text(csvRawStream([rows.slice(0, 5), [], rows.slice(5)], cols));
    const want = stringify(
      rows.map((r) => [neutralise(r[0] as string), (Math.round((r[1] as number) * 1000) / 1000).toFixed(3), r[2] ? "true" : "false", r[3] === null ? "" : String(r[3])]),
      { header: true, columns: ["uid", "minutes", "rec", "n"], record_delimiter: "\r\n", quoted_match: /[\r\n]/ },
    );
    expect(got).toBe(want);
    for (const v of [0, -0, 0.0005, 1.0005, -1.2345, 12345.6785, 1e-9, 2 / 3, 1e12 + 0.5]) expect(fixed3(v)).toBe((Math.round(v * 1000) / 1000).toFixed(3));
  });

  it("stops on abort", async () => {
    const { csvRawStream } = await import("./csv");
    let produced = 0;
    function* rows(): Generator<unknown[][]> {
      for (let i = 0; i < 1_000_000; i += 256) {
        produced += 256;
        yield Array.from({ length: 256 }, (_, k) => [i + k, i + k]);
      }
    }
    const ac = new AbortController();
    const reader = csvRawStream(rows(), [{ header: "a" }, { header: "b" }], ac.signal).getReader();
    await reader.read();
    ac.abort();
    await reader.cancel();
    expect(produced).toBeLessThan(10_000);
  });
});

describe("columns for people", () => {
  it("object rows and raw rows get the same label and ISO cells, after the data columns", async () => {
    interface Call { type: string | null; startAt: number | null; receivedMs: number }
    const cols = [
      { key: "type" as const }, { key: "startAt" as const }, { key: "receivedMs" as const },
      labelColumn<Call>("type"), isoColumn<Call>("startAt"), { header: "receivedAtIso", derived: { of: "receivedMs" as const, as: "isoMs" as const } },
    ];
    const rawCols = [{ header: "type" }, { header: "startAt" }, { header: "receivedMs" }, { header: "typeLabel", derived: { of: 0, as: "label" as const } }, { header: "startAtIso", derived: { of: 1, as: "iso" as const } }, { header: "receivedAtIso", derived: { of: 2, as: "isoMs" as const } }];
    const rows: Call[] = [
      { type: "meet", startAt: 1_767_225_600, receivedMs: 1_767_225_600_500 },
      { type: "=HYPERLINK(1)", startAt: null, receivedMs: 0 },
      { type: 'a,"b"', startAt: 1_774_746_000, receivedMs: 1_774_746_000_000 },
    ];
    const ctx = csvContext("Europe/Berlin");
    const objects = await text(csvStream(rows, cols, undefined, ctx));
    const raw = await text(csvRawStream([rows.map((r) => [r.type, r.startAt, r.receivedMs])], rawCols, undefined, ctx));
    expect(raw).toBe(objects);
    const out = parse(objects, { columns: true }) as Array<Record<string, string>>;
    expect(out.map((r) => [r.typeLabel, r.startAtIso, r.receivedAtIso])).toEqual([
      ["Meeting", "2026-01-01T01:00:00+01:00", "2026-01-01T01:00:00+01:00"],
      ["'=HYPERLINK(1)", "", "1970-01-01T01:00:00+01:00"],
      ['a,"b"', "2026-03-29T03:00:00+02:00", "2026-03-29T03:00:00+02:00"],
    ]);
    expect(() => rawDerived([{ header: "x", derived: { of: 0, as: "iso" } }, { header: "y" }])).toThrow(/after the data columns/);
  });
});
