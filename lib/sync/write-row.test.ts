/**
 * `fieldsRow` (a record read by its fields straight into its write row) must give exactly
 * the row `toWriteRow(parseCallRecord(...))` gives, value for value (Object.is: -0, 1 and
 * "1" differ), and refuse exactly the records parseCallRecord refuses. Checked on every
 * data mix as the page reader reads it, on the hand-written quirks, and on records made
 * of random quirky values for every field.
 */
import { describe, expect, it } from "vitest";
import { generateCallAt, makeContext } from "@/lib/emulator/generator";
import { DATA_MIXES, DATA_MIX_NAMES } from "@/lib/emulator/mixes";
import { mulberry32 } from "@/lib/emulator/prng";
import { INVALID_KINDS, serializeServed, serializeWire, toWire } from "@/lib/emulator/quirks";
import { parseCallRecord } from "@/lib/platform/call-record";
import { CallFields, ParticipantFields, readCallsPage } from "@/lib/platform/page-reader";
import { HOSTILE_RECORDS } from "./test-hostile-records";
import { fieldsRow } from "./write-row";
import { toWriteRow, W, type WriteRow } from "./pending-rows";

/** The reference: the parsed call made into its row (hash left null, as fieldsRow leaves it). */
function expectedRow(fields: CallFields, extras: Array<string | null>, start: number, end: number): WriteRow | undefined {
  const r = parseCallRecord(fields);
  if (!r.ok) return undefined;
  const row = toWriteRow({ call: r.call, rawJson: null, rawStart: start, rawEnd: end, hash: "", participantExtras: extras });
  row[W.hash] = null;
  return row;
}

function expectSame(fields: CallFields, extras: Array<string | null>, start = 7, end = 99): boolean {
  const want = expectedRow(fields, extras, start, end);
  const got = fieldsRow(fields, extras, start, end);
  expect(got).toEqual(want);
  return want !== undefined;
}

describe("a record read by its fields straight into its write row", () => {
  it("is the parsed call's row for every data mix and the hand-written quirks", () => {
    const texts: string[] = [...HOSTILE_RECORDS];
    for (const mix of DATA_MIX_NAMES) {
      const ctx = makeContext({ appId: `w-${mix}`, seed: 5, count: 300, now: 1_780_000_000, months: 10, mix });
      for (let s = 0; s < 300; s++) {
        const rec = generateCallAt(ctx, s);
        texts.push(serializeServed(rec, undefined, DATA_MIXES[mix]));
        if (s < INVALID_KINDS.length) texts.push(serializeWire(toWire(rec, INVALID_KINDS[s], DATA_MIXES[mix]), DATA_MIXES[mix]));
      }
    }
    const read = readCallsPage(Buffer.from(`{"data":[${texts.slice(0, 1000).join(",")}]}`), 1000)!;
    const more = readCallsPage(Buffer.from(`{"data":[${texts.slice(1000).join(",")}]}`), 1000)!;
    let rows = 0;
    let refused = 0;
    for (const page of [read, more]) {
      page.records.forEach((rec, i) => {
        if (page.extras[i] === undefined) return; // read whole: never given to fieldsRow
        if (expectSame(rec as CallFields, page.extras[i]!, page.ranges[2 * i], page.ranges[2 * i + 1])) rows++;
        else refused++;
      });
    }
    expect(rows).toBeGreaterThan(1400);
    expect(refused).toBeGreaterThan(5);
  });

  it("is the parsed call's row for records of random quirky values", () => {
    const rng = mulberry32(42);
    const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)];
    /** Mostly a usual value; now and then any value of the pool (many of which a field refuses). */
    const quirk = (usual: () => unknown, pool: readonly unknown[]): unknown => (rng() < 0.04 ? pick(pool) : usual());
    const anything = [undefined, null, "", "  ", "x", " ongoing ", "ended", 0, -0, 1, 2.5, -3, 1e21, "12", " 3.5 ", "-0", "1e3", "0x10", "abc", true, false, "true", "yes", "No", "0", "1", {}, [], [1]];
    const epochs = [undefined, null, 0, -1, 1_700_000_000, 1_700_000_000.7, "1700000000", " 1700000100 ", "1.7e9", "soon", "", 1_700_000_050];
    const durations = [undefined, null, "", "00:04:20", "1:02:03", "12:30", "61:00", "00:61:00", " 00:01:00 ", "45", "4.6", 125, 125.5, -1, "a:b", "1:2:3:4", "100000000:00:00"];
    const minutes = [...anything, "00:05:00", "1:30", "1:75", 4.333, "4.333"];
    const participant = (): unknown => {
      if (rng() < 0.03) return pick([null, 5, "p", [1]]);
      const p = new ParticipantFields();
      p.uid = quirk(() => pick(["u1", " u2 ", "ü", 7, "user-0001"]), anything);
      p.state = quirk(() => pick([undefined, "ended", " ongoing ", ""]), anything);
      p.isJoined = quirk(() => pick([undefined, true, false, "yes", "0", 1, null]), ["maybe", 2, {}]);
      p.totalAudioMinutes = quirk(() => rng() * 100, minutes);
      p.totalVideoMinutes = quirk(() => Math.round(rng() * 1e3) / 1e3, minutes);
      p.totalDuration = quirk(() => pick([undefined, 4.333, "00:05:00"]), minutes);
      p.deviceId = quirk(() => pick([undefined, null, "6227716282", 6227716282, ""]), anything);
      p.joinedAt = quirk(() => pick(epochs.slice(0, 8)), epochs);
      p.leftAt = quirk(() => pick(epochs.slice(0, 8)), epochs);
      p.mid = quirk(() => pick([undefined, null, "m-1", 12]), anything);
      return p;
    };
    let rows = 0;
    for (let n = 0; n < 20_000; n++) {
      const c = new CallFields();
      c.sessionId = quirk(() => pick(["s1", " s2 ", "v1.us.x.1", 17, 1.5]), anything);
      c.mid = quirk(() => pick(["mid-1", undefined, null]), anything);
      c.type = quirk(() => pick(["audio", "video", " video ", undefined]), anything);
      c.mode = quirk(() => "meet", anything);
      c.status = quirk(() => pick(["ended", "ongoing", undefined]), anything);
      c.initiator = quirk(() => "a", anything);
      c.receiver = quirk(() => "b", anything);
      c.receiverType = quirk(() => "group", anything);
      c.initiatedAt = quirk(() => pick(epochs.slice(0, 8)), epochs);
      c.startedAt = quirk(() => pick(epochs.slice(0, 8)), epochs);
      c.endedAt = quirk(() => pick(epochs.slice(0, 8)), epochs);
      c.hasRecording = quirk(() => pick([undefined, true, false, "yes", null, ""]), anything);
      c.totalAudioMinutes = quirk(() => rng() * 50, minutes);
      c.totalVideoMinutes = quirk(() => pick([0, -0, 1.25, "2.5"]), minutes);
      c.totalDurationInMinutes = quirk(() => pick([undefined, 3.25, " 7 "]), minutes);
      c.totalDuration = quirk(() => pick([undefined, "00:04:20", 260]), durations);
      c.totalParticipants = quirk(() => pick([undefined, 2, "3", 2.9, null, -0]), anything);
      const k = Math.floor(rng() * 5);
      c.participants = rng() < 0.03 ? pick([undefined, null, "p", 3]) : Array.from({ length: k }, participant);
      const extras = Array.from({ length: k }, () => (rng() < 0.2 ? `{"platform":"android"}` : null));
      if (expectSame(c, extras, n, n + 500)) rows++;
    }
    // Both kinds well represented: rows made and records refused.
    expect(rows).toBeGreaterThan(2_000);
    expect(rows).toBeLessThan(18_000);
  });
});
