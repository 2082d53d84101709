// Users and groups of one tenant app. Deterministic from (seed, appId). Every app gets
// the same set of hostile uids on purpose: they exercise CSV neutralising, URL encoding,
// SQL parameter binding and JSON escaping all the way to the browser.
import { DATA_MIXES, type DataMix } from "./mixes";
import { hashString, int, mix, mulberry32, pick, shuffled, type Rng } from "./prng";

export const NASTY_UIDS: readonly string[] = [
  "zoë",
  "用户42",
  "🦄unicorn",
  "=cmd|' /C calc'!A0",
  "+15550100",
  "-minus-user",
  "@handle",
  "a,b",
  'say "hi"',
  "line\nbreak",
  "o'brien",
  "back\\slash",
  "tab\there",
];

const FIRST = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory", "niaj", "olivia", "peggy", "rupert", "sybil", "trent", "victor", "walter", "yara", "zane", "amir", "bea", "chen", "dmitri", "elena", "farah", "goran", "hana", "ines", "jonas", "kiri", "lars", "mei", "nora", "omar", "priya", "quinn", "rosa", "sven"];
const LAST = ["smith", "garcia", "müller", "rossi", "kim", "nguyen", "okafor", "silva", "kowalski", "tanaka", "dubois", "jensen", "patel", "haddad", "novak"];
const TEAMS = ["sales", "support", "eng", "ops", "design", "finance", "hr", "legal", "growth", "qa"];

export interface Population {
  users: string[];
  /** Display names by uid index (webhook occupants carry names, not uids). */
  names: string[];
  groups: string[];
  /** Member uid indices per group index. */
  groupMembers: number[][];
  uidIndex: Map<string, number>;
}

function displayName(uid: string): string {
  const base = uid.split(/[._-]/)[0] ?? uid;
  return base.length > 0 ? base.charAt(0).toUpperCase() + base.slice(1) : uid;
}

export function buildPopulation(seed: number, appId: string, shape: DataMix = DATA_MIXES.standard): Population {
  const rng: Rng = mulberry32(mix(seed, hashString(appId), 0x9091));
  const size = int(rng, shape.users[0], shape.users[1]);
  const seen = new Set<string>(NASTY_UIDS);
  const users: string[] = [...NASTY_UIDS];
  let n = 0;
  while (users.length < size) {
    n++;
    // Mixed styles: real tenant apps hold ids from several client generations.
    const style = rng();
    const uid =
      style < 0.5
        ? `${pick(rng, FIRST)}.${pick(rng, LAST)}${int(rng, 1, 99)}`
        : style < 0.8
          ? `user-${String(n).padStart(4, "0")}`
          : `${pick(rng, FIRST)}_${int(rng, 100, 9999)}`;
    if (seen.has(uid)) continue;
    seen.add(uid);
    users.push(uid);
  }
  const order = shuffled(rng, users);
  const uidIndex = new Map<string, number>();
  order.forEach((u, i) => uidIndex.set(u, i));
  const groupCount = int(rng, shape.groups[0], shape.groups[1]);
  const groups: string[] = [];
  const groupMembers: number[][] = [];
  for (let g = 0; g < groupCount; g++) {
    groups.push(g === 3 ? "équipe-été" : `${pick(rng, TEAMS)}-${g + 1}`);
    const size = Math.min(order.length, int(rng, shape.groupSize[0], shape.groupSize[1]));
    const members = new Set<number>();
    while (members.size < size) members.add(int(rng, 0, order.length - 1));
    groupMembers.push([...members]);
  }
  const nasty = new Set(NASTY_UIDS);
  const names = order.map((u) => (nasty.has(u) ? u : displayName(u)));
  return { users: order, names, groups, groupMembers, uidIndex };
}
