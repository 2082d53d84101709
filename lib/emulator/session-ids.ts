// The two kinds of sessionId the emulator can serve. The seed says only that a sessionId
// is "a string identifying the call session", so an upstream may use ids that follow
// time (the emulator's default, shaped like the platform's `v1.<region>.<app>.<time>…`)
// or random ones (UUIDs). The order matters to the warehouse: ids that follow time go in
// at one edge of its (app_pk, session_id) index, random ones anywhere in it.
//
// Both are a function of the call's (initiatedAt, tail), where tail is 32 random bits
// drawn from the call's own generator, so that a random id changes nothing else of the
// record and the store can still find a call from its id alone.
import { mix, mulberry32 } from "./prng";
import type { Region } from "./types";

export const SESSION_ID_ORDERS = ["time", "random"] as const;
export type SessionIdOrder = (typeof SESSION_ID_ORDERS)[number];

export function isSessionIdOrder(v: string): v is SessionIdOrder {
  return (SESSION_ID_ORDERS as readonly string[]).includes(v);
}

const hex8 = (v: number) => (v >>> 0).toString(16).padStart(8, "0");

/** `v1.<region>.<appId>.<initiatedAt><tail as 8 hex digits>`: sorts by time within an app. */
export function timeSessionId(region: Region, appId: string, initiatedAt: number, tail: number): string {
  return `v1.${region}.${appId}.${initiatedAt}${hex8(tail)}`;
}

/** Rounds of the Feistel network below: four make every output bit depend on every input bit. */
const ROUNDS = 4;

/**
 * A bijection of 64 bits (two 32-bit halves) keyed by `key`: distinct (initiatedAt, tail)
 * pairs, which the emulator already keeps distinct, give distinct ids, spread uniformly.
 */
function scramble(key: number, hi: number, lo: number): [number, number] {
  let l = hi >>> 0;
  let r = lo >>> 0;
  for (let i = 0; i < ROUNDS; i++) [l, r] = [r, (l ^ mix(key, i, r)) >>> 0];
  return [l, r];
}

function unscramble(key: number, hi: number, lo: number): [number, number] {
  let l = hi >>> 0;
  let r = lo >>> 0;
  for (let i = ROUNDS - 1; i >= 0; i--) [l, r] = [(r ^ mix(key, i, l)) >>> 0, l];
  return [l, r];
}

/**
 * A version-4-shaped UUID (36 characters) whose first 16 hex digits are the scrambled
 * (initiatedAt, tail): random in any order that matters, unique, and decodable by
 * `decodeRandomSessionId`. The remaining digits are noise derived from the same pair.
 */
export function randomSessionId(key: number, initiatedAt: number, tail: number): string {
  const [a, b] = scramble(key, initiatedAt, tail);
  const rng = mulberry32(mix(key, a, b));
  const word = () => hex8((rng() * 0x100000000) >>> 0);
  const head = hex8(a) + hex8(b);
  const noise = word() + word();
  const variant = "89ab"[(rng() * 4) | 0];
  return `${head.slice(0, 8)}-${head.slice(8, 12)}-4${head.slice(12, 15)}-${variant}${head[15]}${noise.slice(0, 2)}-${noise.slice(2, 14)}`;
}

const RANDOM_ID = /^([0-9a-f]{8})-([0-9a-f]{4})-4([0-9a-f]{3})-[89ab]([0-9a-f])[0-9a-f]{2}-[0-9a-f]{12}$/;

/** The (initiatedAt, tail) a random id was made from, or undefined if it is not one. */
export function decodeRandomSessionId(key: number, id: string): { initiatedAt: number; tail: number } | undefined {
  const m = RANDOM_ID.exec(id);
  if (!m) return undefined;
  const head = m[1] + m[2] + m[3] + m[4];
  const [initiatedAt, tail] = unscramble(key, parseInt(head.slice(0, 8), 16), parseInt(head.slice(8), 16));
  return { initiatedAt, tail };
}

/**
 * The 32-bit number that orders ids of calls initiated in the same second as the ids
 * themselves sort: the tail digits of a time id, the first 8 digits of a random one
 * (lowercase hex of fixed width sorts as its value).
 */
export function sameSecondOrderKey(id: string): number {
  return parseInt(id.includes(".") ? id.slice(-8) : id.slice(0, 8), 16) >>> 0;
}
