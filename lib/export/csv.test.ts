import { parse } from "csv-parse/sync";
import { describe, expect, it } from "vitest";
import { csvCell, csvStream, neutralise } from "./csv";

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
