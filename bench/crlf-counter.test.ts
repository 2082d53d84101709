import { describe, expect, it } from "vitest";
import { CrlfCounter } from "./crlf-counter";

/** The bench's record count (csvRate) against a byte-by-byte count, over every way of cutting the bytes into chunks. */
function byteByByte(bytes: Uint8Array): number {
  let n = 0;
  for (let i = 1; i < bytes.length; i++) if (bytes[i] === 10 && bytes[i - 1] === 13) n++;
  return n;
}

describe("CrlfCounter", () => {
  const csv = Buffer.from('a,b\r\n1,"two\nlines"\r\n\r\n"x\r\ny",\r\r\n3,4\r\n\n\r');
  it("counts CRLFs, not bare line breaks, wherever the chunks are cut", () => {
    const want = byteByByte(csv);
    expect(want).toBe(6);
    for (let cut = 0; cut <= csv.length; cut++) {
      for (let cut2 = cut; cut2 <= csv.length; cut2++) {
        const c = new CrlfCounter();
        c.add(csv.subarray(0, cut));
        c.add(csv.subarray(cut, cut2));
        c.add(csv.subarray(cut2));
        expect(c.count, `${cut} ${cut2}`).toBe(want);
      }
    }
  });

  it("reads a view into a larger buffer as that view only", () => {
    const big = new Uint8Array([13, 10, 13, ...csv, 10, 13, 10]);
    const c = new CrlfCounter();
    c.add(big.subarray(3, 3 + csv.length));
    expect(c.count).toBe(byteByByte(csv));
  });
});
