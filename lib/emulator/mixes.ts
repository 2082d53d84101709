// Data mixes: the shapes of tenant apps the emulator can generate. The default
// ("standard") is the emulator's own mix; the others exist so that benchmarks and tests
// do not only see data shaped like what the code was tuned for (issue 15): a few heavy
// users, many light ones, long meetings with 20+ participants, and the platform's own
// wire shape as measured from an independent upstream (about 890 bytes a call, 15% of
// records with numeric values sent as strings, extra undeclared fields).

export interface DataMix {
  /** Users of one app's population, [min, max]. */
  users: readonly [number, number];
  /** Groups of one app, [min, max], and members of one group, [min, max]. */
  groups: readonly [number, number];
  groupSize: readonly [number, number];
  /** Share of calls that are one-to-one (`call`) and meetings (`meet`); the rest are `presenter`. */
  callShare: number;
  meetShare: number;
  /** Members who join a meeting, initiator included, [min, max] (capped by the group's size). */
  meetingJoin: readonly [number, number];
  /** Invited members who never come, at most. */
  meetingNoShows: number;
  /** Percent of records whose numeric fields are sent as strings, and with extra undeclared keys. */
  stringsPercent: number;
  extraPercent: number;
}

export const DATA_MIXES = {
  /** The emulator's own mix: meetings of 3-12, 4% string records, 8% with extra keys. */
  standard: { users: [220, 380], groups: [25, 45], groupSize: [6, 40], callShare: 0.6, meetShare: 0.3, meetingJoin: [3, 12], meetingNoShows: 3, stringsPercent: 4, extraPercent: 8 },
  /** Like the independent upstream that measured 13.9k calls/s: ~3 participants, ~900 bytes a call, 15% strings. */
  platform: { users: [2_000, 3_000], groups: [150, 250], groupSize: [4, 30], callShare: 0.6, meetShare: 0.3, meetingJoin: [3, 4], meetingNoShows: 1, stringsPercent: 15, extraPercent: 20 },
  /** A few heavy users: 30-40 people in a handful of teams make every call. */
  "heavy-users": { users: [30, 40], groups: [4, 6], groupSize: [6, 20], callShare: 0.5, meetShare: 0.4, meetingJoin: [3, 8], meetingNoShows: 2, stringsPercent: 15, extraPercent: 20 },
  /** Many light users: tens of thousands of uids, most seen a handful of times. */
  "light-users": { users: [40_000, 50_000], groups: [3_000, 4_000], groupSize: [3, 12], callShare: 0.7, meetShare: 0.25, meetingJoin: [3, 6], meetingNoShows: 2, stringsPercent: 15, extraPercent: 20 },
  /** Long meetings with 20+ participants (town halls, classes). */
  "big-meetings": { users: [800, 1_200], groups: [20, 40], groupSize: [30, 80], callShare: 0.2, meetShare: 0.5, meetingJoin: [20, 45], meetingNoShows: 5, stringsPercent: 15, extraPercent: 20 },
} as const satisfies Record<string, DataMix>;

export type DataMixName = keyof typeof DATA_MIXES;
export const DATA_MIX_NAMES = Object.keys(DATA_MIXES) as DataMixName[];

export function isDataMixName(name: string): name is DataMixName {
  return Object.hasOwn(DATA_MIXES, name);
}
