import { describe, expect, it } from "vitest";
import { csvBatchStream, csvStream, type CsvColumn } from "./csv";

/** csvBatchStream (an engine's async batches of row objects) writes csvStream's bytes. */

interface Row { uid: string | null; minutes: number; ok: boolean; n: number | null }
const columns: CsvColumn<Row>[] = [{ key: "uid" }, { key: "minutes", kind: "decimal" }, { key: "ok", header: "ok?" }, { key: "n" }];

const text = (stream: ReadableStream<Uint8Array>) => new Response(stream).text();

async function* batchesOf(rows: Row[], sizes: number[]): AsyncGenerator<Row[]> {
  let i = 0;
  for (const size of sizes) {
    yield rows.slice(i, i + size);
    i += size;
  }
  if (i < rows.length) yield rows.slice(i);
}

const hostile = ["a,b", 'say "hi"', "line\nbreak", "cr\ronly", "zoë 用户42 🦄", "=cmd|' /C calc'!A0", "+1", "-x", "@a", "\tt", "", null];
const rows: Row[] = Array.from({ length: 1500 }, (_, i) => ({ uid: hostile[i % hostile.length], minutes: i / 7, ok: i % 3 === 0, n: i % 5 ? i : null }));

describe("csvBatchStream", () => {
  it("writes the same bytes as csvStream, whatever the batches (empty ones included)", async () => {
    const want = await text(csvStream(rows, columns));
    expect(want.split("\r\n").length).toBeGreaterThan(1500);
    for (const sizes of [[1500], [1, 0, 511, 512, 0, 476], [700, 0, 0], [0]]) {
      expect(await text(csvBatchStream(batchesOf(rows, sizes), columns)), JSON.stringify(sizes)).toBe(want);
    }
  });

  it("writes the header alone for no rows, as csvStream does", async () => {
    const want = await text(csvStream([] as Row[], columns));
    expect(want).toBe("uid,minutes,ok?,n\r\n");
    expect(await text(csvBatchStream(batchesOf([], []), columns))).toBe(want);
    expect(await text(csvBatchStream(batchesOf([], [0, 0]), columns))).toBe(want);
  });

  it("pulls batches only as the reader asks, and releases the source on abort", async () => {
    let produced = 0;
    let closed = false;
    async function* endless(): AsyncGenerator<Row[]> {
      try {
        for (let i = 0; ; i++) {
          produced++;
          yield [{ uid: `u${i}`, minutes: i, ok: true, n: i }];
        }
      } finally {
        closed = true;
      }
    }
    const ac = new AbortController();
    const reader = csvBatchStream(endless(), columns, ac.signal).getReader();
    await reader.read();
    await reader.read();
    expect(produced).toBeLessThan(5);
    ac.abort();
    await reader.cancel();
    await new Promise((r) => setTimeout(r, 10));
    expect(closed).toBe(true);
    expect(produced).toBeLessThan(5);
  });
});
