/**
 * The byte reader takes a page only when JSON.parse would take it and give the same
 * values: pages it should leave to JSON.parse (bad syntax of every kind, a shape other
 * than {data: [...]}) come back undefined, and a fuzz of damaged pages never yields a
 * page that JSON.parse refuses or reads differently. (That the rows it leads to are the
 * JSON path's rows: lib/sync/record-reading.test.ts.)
 */
import { describe, expect, it } from "vitest";
import { mulberry32 } from "@/lib/emulator/prng";
import { HOSTILE_RECORDS } from "@/lib/sync/test-hostile-records";
import { extraParticipantJson } from "@/lib/sync/pending-rows";
import { CallFields, ParticipantFields, readCallsPage } from "./page-reader";

const page = (data: string, meta = `{"pagination":{"total_pages":3}}`) => Buffer.from(`{"data":${data},"meta":${meta}}`);

/** What the reader's answer must equal: JSON.parse's values, known fields only where read by fields. */
function expectAsJsonParse(bytes: Buffer) {
  const read = readCallsPage(bytes, 1000);
  if (!read) return false;
  const parsed = JSON.parse(bytes.toString("utf8")) as { data: unknown[]; meta?: unknown };
  expect(read.meta).toEqual(parsed.meta);
  expect(read.records.length).toBe(parsed.data.length);
  read.records.forEach((r, i) => {
    const whole = parsed.data[i] as Record<string, unknown>;
    if (read.extras[i] === undefined) return expect(r).toEqual(whole);
    expect(r).toBeInstanceOf(CallFields);
    const fields = r as CallFields;
    for (const k of Object.keys(new CallFields()) as Array<keyof CallFields>) {
      if (k === "participants" && Array.isArray(whole.participants)) continue;
      expect(fields[k]).toStrictEqual(Object.hasOwn(whole, k) ? whole[k] : undefined);
    }
    if (!Array.isArray(whole.participants)) return;
    const parts = fields.participants as ParticipantFields[];
    expect(parts.length).toBe(whole.participants.length);
    whole.participants.forEach((wp: Record<string, unknown>, j: number) => {
      for (const k of Object.keys(new ParticipantFields()) as Array<keyof ParticipantFields>) {
        expect(parts[j][k]).toStrictEqual(Object.hasOwn(wp, k) ? wp[k] : undefined);
      }
      expect(read.extras[i]![j]).toBe(extraParticipantJson(wp));
    });
  });
  return true;
}

describe("readCallsPage", () => {
  it("reads what JSON.parse reads, records by their known fields", () => {
    const bytes = page(`[${HOSTILE_RECORDS.join(",")}]`);
    expect(expectAsJsonParse(bytes)).toBe(true);
    expect(readCallsPage(page("[]"), 1000)!.records).toEqual([]);
  });

  it("reads every number as JSON.parse does (digits, decimals, exponents, -0, long ones)", () => {
    const rng = mulberry32(7);
    const texts: string[] = ["0", "-0", "-0.0", "0.1", "0.30000000000000004", "9007199254740993", "123456789012345", "1234567890123456", "1.7976931348623157e308", "5e-324", "1E+2", "-1e-7"];
    for (let n = 0; n < 20_000; n++) {
      const intDigits = Math.floor(rng() * 12);
      const fracDigits = Math.floor(rng() * 10);
      let t = rng() < 0.2 ? "-" : "";
      t += intDigits === 0 ? "0" : String(1 + Math.floor(rng() * 9)) + Array.from({ length: intDigits - 1 }, () => Math.floor(rng() * 10)).join("");
      if (fracDigits > 0) t += "." + Array.from({ length: fracDigits }, () => Math.floor(rng() * 10)).join("");
      texts.push(t);
    }
    const records = texts.map((t) => `{"totalAudioMinutes":${t}}`);
    const read = readCallsPage(page(`[${records.join(",")}]`), 100_000)!;
    texts.forEach((t, i) => expect(Object.is((read.records[i] as CallFields).totalAudioMinutes, JSON.parse(t)), t).toBe(true));
  });

  it("leaves to JSON.parse every page that is not plain JSON of the expected shape", () => {
    const refused = [
      `{"data":[{"sessionId":"a"}],"data":[{"sessionId":"b"}]}`, // data twice
      `{"data":[],"meta":{},"meta":{}}`, // meta twice
      `{"meta":{}}`, // no data
      `{"data":{"sessionId":"a"}}`, // data not an array
      `[{"sessionId":"a"}]`, // not an object
      `{}`,
      `{"d\\u0061ta":[]}`, // a top-level key with an escape
      `{"data":[{"sessionId":"a"}]} x`, // trailing bytes
      `\ufeff{"data":[]}`, // a byte order mark
      `{"data":[{"sessionId":"a"},]}`, // trailing comma
      `{"data":[{"sessionId":"a",}]}`,
      `{"data":[{"sessionId":"a"}}`, // truncated / unbalanced
      `{"data":[{"sessionId":"a\tb"}]}`, // a raw control character in a string
      `{"data":[{"sessionId":"a\\x"}]}`, // a bad escape
      `{"data":[{"sessionId":"\\u12g4"}]}`,
      `{"data":[{"initiatedAt":01}]}`, // numbers JSON does not allow
      `{"data":[{"initiatedAt":1.}]}`,
      `{"data":[{"initiatedAt":.5}]}`,
      `{"data":[{"initiatedAt":+1}]}`,
      `{"data":[{"initiatedAt":1e}]}`,
      `{"data":[{"initiatedAt":NaN}]}`,
      `{"data":[{"hasRecording":tru}]}`,
      `{"data":[{'sessionId':"a"}]}`,
      `{"data":[{"x":${"[".repeat(100)}${"]".repeat(100)}}]}`, // deeper than the reader goes
    ];
    for (const text of refused) expect(readCallsPage(Buffer.from(text), 1000), text).toBeUndefined();
    // More records than the caller allows: its own JSON path refuses them with its message.
    expect(readCallsPage(page(`[{},{},{}]`), 2)).toBeUndefined();
    expect(readCallsPage(page(`[{},{}]`), 2)!.records).toHaveLength(2);
  });

  it("never takes a damaged page that JSON.parse refuses or reads otherwise (fuzz)", () => {
    const base = page(`[${HOSTILE_RECORDS.slice(0, 12).join(",")}]`);
    const rng = mulberry32(20261124);
    const bytesOf = ['"', "\\", "{", "}", "[", "]", ",", ":", "0", "-", ".", "e", "t", "n", " ", "\n", "\t", "\x01", "\xff", "u"];
    let taken = 0;
    for (let n = 0; n < 1500; n++) {
      let b = Buffer.from(base);
      const edits = 1 + Math.floor(rng() * 3);
      for (let e = 0; e < edits; e++) {
        const at = Math.floor(rng() * b.length);
        const kind = rng();
        const insert = Buffer.from(bytesOf[Math.floor(rng() * bytesOf.length)], "latin1");
        if (kind < 0.2) b = b.subarray(0, at); // truncated
        else if (kind < 0.5) b[at] = insert[0]; // replaced
        else if (kind < 0.8) b = Buffer.concat([b.subarray(0, at), insert, b.subarray(at)]); // inserted
        else b = Buffer.concat([b.subarray(0, at), b.subarray(at + 1)]); // removed
      }
      let valid = true;
      try {
        JSON.parse(b.toString("utf8"));
      } catch {
        valid = false;
      }
      const read = readCallsPage(b, 1000);
      if (!valid) expect(read, b.toString("latin1")).toBeUndefined();
      else if (read) taken += expectAsJsonParse(b) ? 1 : 0;
    }
    // Most damaged pages are not JSON; some still are, and are read.
    expect(taken).toBeGreaterThan(25);
  });
});
