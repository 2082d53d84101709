import { describe, expect, it } from "vitest";
import type { CallParticipantDetail } from "@/lib/analytics";
import { groupByPerson, peopleCount } from "./people";

const row = (seq: number, uid: string, joinedAt: number | null, leftAt: number | null, minutes: number, extra: Partial<CallParticipantDetail> = {}): CallParticipantDetail => ({
  seq, uid, state: joinedAt === null ? "unanswered" : "ended", isJoined: joinedAt !== null, joinedAt, leftAt,
  totalAudioMinutes: minutes, totalVideoMinutes: 0.5, totalDurationMinutes: minutes + 0.5, deviceId: joinedAt === null ? null : `d-${uid}-${seq}`, mid: null, ...extra,
});

describe("a call's participants as people", () => {
  it("groups a uid's sessions under one person: first join, last leave, minutes summed", () => {
    const people = groupByPerson([row(0, "ann", 100, 200, 1.5), row(1, "bo", 110, 400, 4), row(2, "ann", 250, 390, 2.25), row(3, "cy", null, null, 0)]);
    expect(people.map((p) => p.uid)).toEqual(["ann", "bo", "cy"]);
    expect(people[0]).toMatchObject({ joined: true, joinedAt: 100, leftAt: 390, audioMinutes: 3.75, videoMinutes: 1, totalMinutes: 4.75, states: ["ended"], devices: ["d-ann-0", "d-ann-2"] });
    expect(people[0].sessions.map((s) => s.seq)).toEqual([0, 2]);
    expect(people[2]).toMatchObject({ joined: false, joinedAt: null, leftAt: null, states: ["unanswered"], devices: [] });
    expect(peopleCount(people)).toEqual({ people: 3, joined: 2, sessions: 4 });
  });

  it("keeps a person in the call while any session is open", () => {
    const [p] = groupByPerson([row(0, "ann", 100, 200, 1), row(1, "ann", 300, null, 1, { state: "ongoing" })]);
    expect(p).toMatchObject({ joinedAt: 100, leftAt: null, states: ["ended", "ongoing"] });
  });
});
