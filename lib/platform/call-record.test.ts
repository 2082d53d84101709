import { describe, expect, it } from "vitest";
import { generateAppCalls } from "@/lib/emulator/generator";
import { callSchema, coerceFields, coercionForTests, parseCallRecord, parseDurationSeconds, participantSchema, type ParsedCall } from "./call-record";

const base = () => ({
  sessionId: "v1.us.app1.1700000000.abc",
  mid: "6b1f-2c",
  type: "video",
  mode: "meet",
  status: "ended",
  initiator: "alice",
  receiver: "group-1",
  receiverType: "group",
  initiatedAt: 1700000000,
  startedAt: 1700000005,
  endedAt: 1700000125,
  hasRecording: false,
  totalAudioMinutes: 1.5,
  totalVideoMinutes: 2.25,
  totalDurationInMinutes: 2,
  totalDuration: "00:02:00",
  totalParticipants: 2,
  participants: [
    { uid: "alice", state: "ended", isJoined: true, totalAudioMinutes: 1, totalVideoMinutes: 1, totalDuration: 2, deviceId: "d-1", joinedAt: 1700000005, leftAt: 1700000125, mid: "m1" },
    { uid: "bob", state: "unanswered", isJoined: false, totalAudioMinutes: 0, totalVideoMinutes: 0, totalDuration: 0 },
  ],
});

function ok(input: unknown): ParsedCall {
  const r = parseCallRecord(input);
  if (!r.ok) throw new Error(`expected ok, got: ${r.reason}`);
  return r.call;
}

function fail(input: unknown): { sessionId: string | null; reason: string } {
  const r = parseCallRecord(input);
  if (r.ok) throw new Error("expected a failure");
  return r;
}

describe("parseCallRecord", () => {
  it("parses a well-formed record", () => {
    const c = ok(base());
    expect(c).toMatchObject({
      sessionId: "v1.us.app1.1700000000.abc",
      type: "video",
      startAt: 1700000005,
      durationSeconds: 120,
      totalDurationMinutes: 2,
      totalParticipants: 2,
      hasRecording: false,
    });
    expect(c.participants).toHaveLength(2);
    expect(c.participants[0]).toMatchObject({ seq: 0, uid: "alice", deviceId: "d-1", joinedAt: 1700000005, isJoined: true });
  });

  it("accepts numbers sent as strings and integers sent as decimals", () => {
    const c = ok({ ...base(), initiatedAt: "1700000000", startedAt: 1700000005.0, endedAt: "1700000125.0", totalAudioMinutes: "1.5", totalParticipants: "2" });
    expect(c.initiatedAt).toBe(1700000000);
    expect(c.startedAt).toBe(1700000005);
    expect(c.endedAt).toBe(1700000125);
    expect(c.totalAudioMinutes).toBe(1.5);
    expect(c.totalParticipants).toBe(2);
  });

  it("reads totalDuration as HH:MM:SS with hours beyond 24, MM:SS, or seconds", () => {
    expect(ok({ ...base(), totalDuration: "27:03:09" }).durationSeconds).toBe(27 * 3600 + 3 * 60 + 9);
    expect(ok({ ...base(), totalDuration: "03:09" }).durationSeconds).toBe(189);
    expect(ok({ ...base(), totalDuration: 42 }).durationSeconds).toBe(42);
    expect(ok({ ...base(), totalDuration: "42" }).durationSeconds).toBe(42);
    expect(parseDurationSeconds("100:00:00")).toBe(360000);
    expect(parseDurationSeconds("00:61:00")).toBeUndefined();
  });

  it("reads the platform's plain H:MM:SS digit by digit exactly as the general reading does", () => {
    const { plainHms, durationText } = coercionForTests;
    const forms = ["00:00:00", "0:00:48", "27:03:09", "123456789:59:59", "00:59:60", "00:60:00", "1:2:03", "00:02:0a", " 00:02:00", "00:02:00 ", "-1:00:00", "1.5:00:00", "١:00:00", "1234567890:00:00", "00:02", "0:0:0:00:00", "::00:00"];
    for (let i = 0; i < 2_000; i++) {
      const h = String(Math.floor(Math.random() * 10 ** (1 + (i % 9)))).padStart(2, "0");
      forms.push(`${h}:${String(i % 70).padStart(2, "0")}:${String((i * 7) % 70).padStart(2, "0")}`);
    }
    let plain = 0;
    for (const s of forms) {
      const fast = plainHms(s);
      if (fast === undefined) continue;
      plain++;
      expect([s, fast]).toEqual([s, durationText(s)]);
    }
    expect(plain).toBeGreaterThan(1_000);
    // Every form it declines is still read (or refused) by the general reading.
    expect(parseDurationSeconds(" 00:02:00")).toBe(120);
    expect(parseDurationSeconds("00:60:00")).toBeUndefined();
    expect(parseDurationSeconds("1234567890:00:00")).toBe(1234567890 * 3600);
  });

  it("names the field when totalDuration is not a duration", () => {
    const r = fail({ ...base(), totalDuration: "two minutes" });
    expect(r.sessionId).toBe("v1.us.app1.1700000000.abc");
    expect(r.reason).toMatch(/^totalDuration: expected HH:MM:SS/);
  });

  it("reads participant totalDuration as decimal minutes (number or string)", () => {
    const raw = base();
    raw.participants[0].totalDuration = "2.75" as unknown as number;
    const c = ok(raw);
    expect(c.participants[0].totalDurationMinutes).toBe(2.75);
    expect(c.participants[1].totalDurationMinutes).toBe(0);
  });

  it("turns a numeric deviceId into a string", () => {
    const raw = base();
    raw.participants[0].deviceId = 12345 as unknown as string;
    expect(ok(raw).participants[0].deviceId).toBe("12345");
  });

  it("accepts participants that never joined (no joinedAt/leftAt/mid/deviceId)", () => {
    const p = ok(base()).participants[1];
    expect(p).toMatchObject({ uid: "bob", isJoined: false, joinedAt: null, leftAt: null, mid: null, deviceId: null, state: "unanswered" });
  });

  it("accepts booleans as true, \"true\" and 1", () => {
    expect(ok({ ...base(), hasRecording: true }).hasRecording).toBe(true);
    expect(ok({ ...base(), hasRecording: "true" }).hasRecording).toBe(true);
    expect(ok({ ...base(), hasRecording: 1 }).hasRecording).toBe(true);
    expect(ok({ ...base(), hasRecording: "false" }).hasRecording).toBe(false);
    expect(ok({ ...base(), hasRecording: undefined }).hasRecording).toBe(false);
    expect(fail({ ...base(), hasRecording: "maybe" }).reason).toMatch(/^hasRecording: expected a boolean/);
  });

  it("keeps unknown extra fields in raw and unknown enum values as strings", () => {
    const input = { ...base(), status: "transferred", newField: { a: 1 } };
    const r = parseCallRecord(input);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.call.status).toBe("transferred");
    expect(r.raw.newField).toEqual({ a: 1 });
    expect(r.raw).toBe(input);
  });

  it("keeps the same uid twice (rejoin) as two participants", () => {
    const raw = base();
    const c = ok({ ...raw, participants: [...raw.participants, { ...raw.participants[0], deviceId: "d-2" }] });
    expect(c.participants.map((p) => [p.seq, p.uid])).toEqual([[0, "alice"], [1, "bob"], [2, "alice"]]);
  });

  it("uses initiatedAt as start when the call never started", () => {
    const { startedAt: _s, endedAt: _e, ...rest } = base();
    const c = ok({ ...rest, status: "unanswered" });
    expect(c.startAt).toBe(1700000000);
    expect(c.startedAt).toBeNull();
  });

  it("requires a sessionId and a start time", () => {
    const { sessionId: _id, ...noId } = base();
    expect(fail(noId)).toMatchObject({ sessionId: null, reason: "sessionId: missing" });
    expect(fail({ ...base(), sessionId: "  " }).reason).toBe("sessionId: empty");
    const { startedAt: _s, initiatedAt: _i, ...noStart } = base();
    expect(fail(noStart).reason).toMatch(/startedAt\/initiatedAt/);
    expect(fail(null).reason).toMatch(/expected an object/);
    expect(fail([1]).reason).toMatch(/expected an object/);
  });

  it("names the field and the participant index on bad values", () => {
    expect(fail({ ...base(), type: { value: "video" } }).reason).toBe("type: expected a string, got an object");
    expect(fail({ ...base(), initiatedAt: "yesterday" }).reason).toMatch(/^initiatedAt: expected a number, got "yesterday"/);
    expect(fail({ ...base(), participants: "[{uid" }).reason).toMatch(/^participants: expected an array/);
    const raw = base();
    (raw.participants[1] as Record<string, unknown>).uid = undefined;
    expect(fail(raw).reason).toBe("participants.1.uid: missing");
  });

  it("refuses impossible minutes (negative, not finite, absurd) on the call and on a participant, naming the field", () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ totalAudioMinutes: -1000 }, /^totalAudioMinutes: expected minutes from 0 to 100,000,000, got -1000$/],
      [{ totalVideoMinutes: "-250.5" }, /^totalVideoMinutes: .*got "-250.5"/],
      [{ totalDurationInMinutes: 1e300 }, /^totalDurationInMinutes: .*got 1e\+300/],
      [{ totalAudioMinutes: "Infinity" }, /^totalAudioMinutes: expected a number/],
      [{ totalDuration: "999999999:00:00" }, /^totalDuration: expected a duration of at most/],
      [{ participants: [{ uid: "a", totalAudioMinutes: -1 }] }, /^participants\.0\.totalAudioMinutes: expected minutes from 0/],
      [{ participants: [{ uid: "a", totalVideoMinutes: 1e12 }] }, /^participants\.0\.totalVideoMinutes: expected minutes from 0/],
      [{ participants: [{ uid: "a", totalDuration: -3 }] }, /^participants\.0\.totalDuration: expected minutes from 0/],
      [{ participants: [{ uid: "a", totalDuration: "999999999:00:00" }] }, /^participants\.0\.totalDuration: expected minutes from 0/],
    ];
    for (const [over, reason] of cases) {
      const r = fail({ ...base(), ...over });
      expect(r.sessionId).toBe("v1.us.app1.1700000000.abc");
      expect(r.reason).toMatch(reason);
    }
    // The edges themselves are possible.
    expect(ok({ ...base(), totalAudioMinutes: 0, totalVideoMinutes: 100_000_000 }).totalVideoMinutes).toBe(100_000_000);
    expect(ok({ ...base(), totalAudioMinutes: -0 }).totalAudioMinutes).toBe(-0);
  });

  it("defaults what is missing sensibly", () => {
    const c = ok({ sessionId: "s1", initiatedAt: 1700000000 });
    expect(c).toMatchObject({
      type: null, status: null, hasRecording: false, totalAudioMinutes: 0, totalVideoMinutes: 0,
      totalDurationMinutes: 0, durationSeconds: 0, totalParticipants: 0, participants: [],
    });
    const d = ok({ sessionId: "s2", startedAt: 1700000000, endedAt: 1700000090, participants: null });
    expect(d.durationSeconds).toBe(90);
    expect(d.totalDurationMinutes).toBe(1.5);
  });

  it("accepts a numeric sessionId as a string", () => {
    expect(ok({ ...base(), sessionId: 12345 }).sessionId).toBe("12345");
  });

  it("agrees with the zod schemas on which records and participants are valid", () => {
    // parseCallRecord coerces valid records directly and runs zod only to report a failure:
    // both must accept and reject exactly the same inputs.
    const quirky: unknown[] = [
      base(),
      { ...base(), totalDuration: "25:00:01", totalParticipants: "2", startedAt: "1700000005.0" },
      { ...base(), hasRecording: "yes", type: 7, mid: 12 },
      { ...base(), hasRecording: "maybe" },
      { ...base(), totalDuration: "1:75:00" },
      { ...base(), endedAt: [] },
      { ...base(), sessionId: "  " },
      { ...base(), participants: {} },
      { sessionId: "s", initiatedAt: 1 },
      ...generateAppCalls({ appId: "q", seed: 3, count: 200, now: 1780000000, months: 1 }),
    ];
    for (const input of quirky) {
      const zodCall = callSchema.safeParse(input);
      const zodParts = zodCall.success
        ? zodCall.data.participants.every((p) => !!p && typeof p === "object" && participantSchema.safeParse(p).success)
        : false;
      const r = parseCallRecord(input);
      const startKnown = zodCall.success && (zodCall.data.startedAt ?? zodCall.data.initiatedAt) != null;
      expect(r.ok, JSON.stringify(input).slice(0, 120)).toBe(zodCall.success && zodParts && startKnown);
      if (!r.ok && !zodCall.success) expect(r.reason).toContain(String(zodCall.error.issues[0]!.path[0]));
    }
  });

  it("coerces field by field exactly as the coercer table does", () => {
    // parseCallRecord's written-out coercion (coerceCall / coerceParticipant) against the
    // table-driven coerceFields, for every field set to every kind of value.
    const { coerceCall, coerceParticipant, CALL_FIELDS, CALL_KEYS, PARTICIPANT_FIELDS, PARTICIPANT_KEYS } = coercionForTests;
    const probes: unknown[] = [
      undefined, null, "", "  ", " x ", "x", "video", "12", " 12 ", "1700000000.0", "-3", "0", "1e3", "NaN", "Infinity", "true", "no",
      "25:00:01", "01:75", "1:2:3:4", "12.5", 0, 1, -1, 2.5, 1700000000, Number.NaN, Infinity, true, false, [], [{}], {}, { a: 1 }, "\u00a0x\u00a0",
    ];
    const record = base() as Record<string, unknown>;
    const participant = (record.participants as Array<Record<string, unknown>>)[0]!;
    let compared = 0;
    for (const k of CALL_KEYS) {
      for (const v of probes) {
        const o = { ...record, [k]: v };
        expect(coerceCall(o), `${k} = ${JSON.stringify(v)}`).toEqual(coerceFields(CALL_FIELDS, CALL_KEYS, o));
        compared++;
      }
    }
    for (const k of PARTICIPANT_KEYS) {
      for (const v of probes) {
        const o = { ...participant, [k]: v };
        expect(coerceParticipant(o), `participant ${k} = ${JSON.stringify(v)}`).toEqual(coerceFields(PARTICIPANT_FIELDS, PARTICIPANT_KEYS, o));
        compared++;
      }
    }
    for (const c of generateAppCalls({ appId: "q", seed: 4, count: 300, now: 1780000000, months: 1 }) as Array<Record<string, unknown>>) {
      expect(coerceCall(c)).toEqual(coerceFields(CALL_FIELDS, CALL_KEYS, c));
      compared++;
    }
    expect(compared).toBeGreaterThan(900);
  });
});
