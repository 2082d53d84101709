import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { GzipPieces } from "./gzip-pieces";

/**
 * Pieces compressed independently make one ordinary gzip member (docs/decisions/0029):
 * Node's zlib and GNU gzip (its own inflate code, not zlib) give back exactly the bytes,
 * check the CRC-32 and length, and see one member.
 */

const GZIP = "/usr/bin/gzip";

async function member(pieces: Uint8Array[], jobs?: number): Promise<Buffer> {
  const zip = new GzipPieces(1, jobs);
  // Asked for all at once, in order (as the lean path does); they may finish in any order.
  const out = await Promise.all(pieces.map((p) => zip.piece(p)));
  return Buffer.concat([...out.flat(), zip.end()]);
}

function csvLike(rows: number, seed: number): Buffer {
  const lines: string[] = [];
  for (let i = 0; i < rows; i++) lines.push(`sess-${seed}-${i},user-${(i * 7919) % 1013},video,meet,${(i * 1.37).toFixed(3)},2026-05-0${(i % 9) + 1}T10:00:00.000Z\r\n`);
  return Buffer.from(lines.join(""));
}

const cases: Array<[string, Uint8Array[]]> = [
  ["no piece at all", []],
  ["one empty piece", [new Uint8Array(0)]],
  ["one byte", [Buffer.from("x")]],
  ["one small piece", [csvLike(1, 1)]],
  ["many pieces, some empty, some not compressible", [csvLike(256, 2), new Uint8Array(0), csvLike(2048, 3), randomBytes(300_000), csvLike(2048, 4), Buffer.from("ü,\"é\"\r\n"), csvLike(5000, 5)]],
];

describe("GzipPieces", () => {
  for (const [name, pieces] of cases) {
    it(`makes one gzip member of ${name} that inflates to the same bytes`, async () => {
      const plain = Buffer.concat(pieces);
      for (const jobs of [1, 2, 4]) {
        const gz = await member(pieces, jobs);
        expect(gunzipSync(gz).equals(plain)).toBe(true);
        // One member: its trailer holds the length of every byte given.
        expect(gz.readUInt32LE(gz.length - 4)).toBe(plain.length);
        if (existsSync(GZIP)) {
          const r = spawnSync(GZIP, ["-dc"], { input: gz, maxBuffer: 1 << 28 });
          expect(r.status, r.stderr.toString()).toBe(0);
          expect(r.stdout.equals(plain)).toBe(true);
        }
      }
    });
  }

  it("fails the member's check when a piece is out of place (the CRC is of the bytes in the order given)", async () => {
    const a = csvLike(100, 6);
    const b = csvLike(100, 7);
    const zip = new GzipPieces(1);
    const [pa, pb] = [await zip.piece(a), await zip.piece(b)];
    // pa starts with the header: swapping the pieces' bodies keeps a valid deflate stream but not the CRC.
    const swapped = Buffer.concat([pa[0], ...pb, ...pa.slice(1), zip.end()]);
    expect(pa[0].length).toBe(10);
    expect(gunzipSync(Buffer.concat([...pa, ...pb, zip.end()])).equals(Buffer.concat([a, b]))).toBe(true);
    expect(() => gunzipSync(swapped)).toThrow();
  });

  it("is about as small as one zlib stream at the same level", async () => {
    const pieces = Array.from({ length: 8 }, (_, i) => csvLike(2048, 10 + i));
    const gz = await member(pieces);
    const whole = (await import("node:zlib")).gzipSync(Buffer.concat(pieces), { level: 1 });
    expect(gz.length).toBeLessThan(whole.length * 1.05);
  });
});
