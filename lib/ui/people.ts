/**
 * A call's participants as people: the platform lists a row per session, so a uid that
 * rejoins (or joins from a second device) appears more than once. The call's page counts
 * people and keeps each session under its person. Pure (tested in people.test.ts).
 */
import type { CallParticipantDetail } from "@/lib/analytics";

export interface Person {
  uid: string;
  /** The person's rows, in the platform's order. */
  sessions: CallParticipantDetail[];
  /** Whether any session joined. */
  joined: boolean;
  /** First join and last leave; `leftAt` null while a session is still open (or none joined). */
  joinedAt: number | null;
  leftAt: number | null;
  audioMinutes: number;
  videoMinutes: number;
  totalMinutes: number;
  /** Distinct states and devices of the sessions, in order of appearance. */
  states: string[];
  devices: string[];
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;
const distinct = (xs: Array<string | null>) => [...new Set(xs.filter((x): x is string => x !== null && x !== ""))];

/** One entry per uid, in the order of each uid's first row. */
export function groupByPerson(participants: readonly CallParticipantDetail[]): Person[] {
  const byUid = new Map<string, CallParticipantDetail[]>();
  for (const p of participants) {
    const list = byUid.get(p.uid);
    if (list) list.push(p);
    else byUid.set(p.uid, [p]);
  }
  return [...byUid].map(([uid, sessions]) => {
    const joinedSessions = sessions.filter((s) => s.joinedAt !== null);
    const open = joinedSessions.some((s) => s.leftAt === null);
    const leaves = joinedSessions.flatMap((s) => (s.leftAt !== null ? [s.leftAt] : []));
    return {
      uid,
      sessions,
      joined: joinedSessions.length > 0 || sessions.some((s) => s.isJoined),
      joinedAt: joinedSessions.length ? Math.min(...joinedSessions.map((s) => s.joinedAt!)) : null,
      leftAt: open || leaves.length === 0 ? null : Math.max(...leaves),
      audioMinutes: round3(sessions.reduce((n, s) => n + s.totalAudioMinutes, 0)),
      videoMinutes: round3(sessions.reduce((n, s) => n + s.totalVideoMinutes, 0)),
      totalMinutes: round3(sessions.reduce((n, s) => n + s.totalDurationMinutes, 0)),
      states: distinct(sessions.map((s) => s.state)),
      devices: distinct(sessions.map((s) => s.deviceId)),
    };
  });
}

/** People who joined, as the call's page counts them (the platform's `totalParticipants` counts joins its own way). */
export function peopleCount(people: readonly Person[]): { people: number; joined: number; sessions: number } {
  return { people: people.length, joined: people.filter((p) => p.joined).length, sessions: people.reduce((n, p) => n + p.sessions.length, 0) };
}
