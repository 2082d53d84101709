import { describe, expect, it } from "vitest";
import { callRawRow, changeRowsV2, stateOfCallRaw, summedState, type CallStateV2 } from "./rows-v2";

const state = (version: number, more: Partial<CallStateV2> = {}): CallStateV2 => ({
  appPk: 3, sessionId: "s-1", version, startAt: 1_767_225_600, type: "video", mode: "meet", status: "ended", receiverType: null,
  platformHasRecording: true, hasLink: false, audioX1000: 1_250, videoX1000: 9_000, durationX1000: 10_250, durationSeconds: 615, totalParticipants: 3,
  initiatedAt: 1_767_225_590, startedAt: 1_767_225_600, endedAt: 1_767_226_215, initiator: "ann", receiver: "team", mid: "m-1",
  firstSeenMs: 11, arrival: 7, source: "sync", contentHash: "h1",
  participants: [
    { seq: 0, uid: "ann", isJoined: true, audioX1000: 500, videoX1000: 4_000, durationX1000: 4_500, state: "ended", deviceId: "d-1", joinedAt: 1_767_225_600, leftAt: 1_767_226_215, mid: "pm-1", raw: '{"extra":1}' },
    { seq: 1, uid: "bob", isJoined: false, audioX1000: 0, videoX1000: 0, durationX1000: 0, state: "unanswered", deviceId: null, joinedAt: null, leftAt: null, mid: null, raw: null },
  ],
  ...more,
});
const codes = { uid: (u: string) => `${u.length}`, session: (s: string) => `${s.length * 1000}` };

describe("schema v2 rows", () => {
  it("reads back from call_raw the state written there, details included, and a delete as no state", () => {
    const s = state(5);
    const row = callRawRow(3, "s-1", 5, undefined, s, '{"sessionId":"s-1"}');
    expect(row).toMatchObject({ deleted: 0, previous: "", raw: '{"sessionId":"s-1"}', p_device_id: ["d-1", null], total_participants: 3 });
    expect(stateOfCallRaw(row)).toEqual(s);
    const linked = state(5, { hasLink: true });
    expect(stateOfCallRaw(callRawRow(3, "s-1", 5, undefined, linked, null))).toEqual(linked);
    const gone = callRawRow(3, "s-1", 6, s, undefined, null);
    expect(gone).toMatchObject({ deleted: 1, source: "deleted" });
    expect(stateOfCallRaw(gone)).toBeUndefined();
    // The state replaced is kept without what only the call's page shows, and gives the same cancel rows.
    const previous = JSON.parse(String(gone.previous)) as CallStateV2;
    expect(previous).toEqual(summedState(s));
    expect(changeRowsV2(previous, undefined, codes)).toEqual(changeRowsV2(s, undefined, codes));
  });

  it("cancels the state replaced with its own version, start and key, then adds the new one; participants name their call by its code", () => {
    const before = state(5);
    const after = state(9, { startAt: before.startAt + 86_400 * 40, audioX1000: 2_000, participants: before.participants.slice(0, 1) });
    const rows = changeRowsV2(before, after, codes);
    expect(rows.calls.map((r) => [r.sign, r.version, r.start_at, r.session_id, r.total_audio_minutes_x1000])).toEqual([
      [-1, 5, before.startAt, "s-1", 1_250],
      [1, 9, after.startAt, "s-1", 2_000],
    ]);
    // What only the call's page shows is in call_raw, not in the scanned rows.
    expect(Object.keys(rows.calls[0])).not.toContain("mid");
    expect(rows.participants.map((r) => [r.sign, r.version, r.start_at, r.session_code, r.seq, r.uid_code])).toEqual([
      [-1, 5, before.startAt, "3000", 0, "3"], [-1, 5, before.startAt, "3000", 1, "3"], [1, 9, after.startAt, "3000", 0, "3"],
    ]);
    expect(Object.keys(rows.participants[0])).not.toContain("device_id");
    expect(() => changeRowsV2(after, before, codes)).toThrow(/higher version/);
  });

  it("marks a uid's first joined and first unanswered row in its call and copies the call's filter dimensions onto every participant row", () => {
    const rejoined = (seq: number, uid: string, joined: boolean, st: string) =>
      ({ seq, uid, isJoined: joined, audioX1000: 0, videoX1000: 0, durationX1000: 0, state: st });
    const s = state(5, {
      type: "screen", totalParticipants: 7,
      participants: [rejoined(0, "ann", false, "unanswered"), rejoined(1, "ann", true, "ended"), rejoined(2, "ann", true, "ended"), rejoined(3, "bob", false, "unanswered"), rejoined(4, "bob", false, "unanswered")],
    });
    const rows = changeRowsV2(s, undefined, codes).participants;
    expect(rows.map((r) => [r.seq, r.first_of_uid, r.first_joined_of_uid, r.first_unanswered_of_uid])).toEqual([
      [0, 1, 0, 1], [1, 0, 1, 0], [2, 0, 0, 0], [3, 1, 0, 1], [4, 0, 0, 0],
    ]);
    // A cancel row carries its state's values; a type outside the documented set is kept as text.
    expect(rows[0]).toMatchObject({ sign: -1, type: "other", type_other: "screen", mode: "meet", status: "ended", receiver_type: "unset", total_participants: 7 });
  });
});
