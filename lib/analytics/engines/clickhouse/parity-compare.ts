/**
 * Test support of the parity suite: comparing two engines' answers exactly, where the
 * only freedom is the order of rows whose sort keys are equal (the in-memory engine
 * breaks such ties by SQLite's pk, ClickHouse by the fact's key: docs/decisions/0014).
 */
import { expect } from "vitest";

export interface RowIdentity<T> {
  /** The sort key(s) the report orders by, as one string: equal keys may come in any order. */
  key: (r: T) => string;
  /** The row's identity (app and session id, app and uid, …). */
  id: (r: T) => string;
}

/** Runs of equal keys: [start, end) positions. */
function runs<T>(rows: T[], key: (r: T) => string): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let i = 0; i < rows.length; ) {
    let j = i + 1;
    while (j < rows.length && key(rows[j]) === key(rows[i])) j++;
    out.push([i, j]);
    i = j;
  }
  return out;
}

const byId = <T>(rows: T[], id: (r: T) => string) => [...rows].sort((a, b) => (id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0));

/** The same rows in the same order of keys; within a run of equal keys, the same rows. */
export function expectSameModuloTies<T>(mem: T[], ch: T[], r: RowIdentity<T>, where: string): void {
  expect(ch.map(r.key), `${where}: sort keys`).toEqual(mem.map(r.key));
  for (const [i, j] of runs(mem, r.key)) {
    expect(byId(ch.slice(i, j), r.id), `${where}: rows with key ${r.key(mem[i])}`).toEqual(byId(mem.slice(i, j), r.id));
  }
}

/**
 * One page of each engine: the same pagination and keys; rows inside the page equal as
 * sets per run of keys, and a run cut by the page's edge holds rows of the whole list's
 * run with that key (`all`: the in-memory engine's whole ordered list).
 */
export function expectSamePage<T>(mem: { data: T[]; meta: unknown }, ch: { data: T[]; meta: unknown }, all: T[], r: RowIdentity<T>, where: string): void {
  expect(ch.meta, `${where}: pagination`).toEqual(mem.meta);
  expect(ch.data.map(r.key), `${where}: sort keys`).toEqual(mem.data.map(r.key));
  const pageRuns = runs(mem.data, r.key);
  const whole = new Map(all.map((x) => [r.id(x), x]));
  pageRuns.forEach(([i, j], k) => {
    const edge = k === 0 || k === pageRuns.length - 1;
    if (!edge) {
      expect(byId(ch.data.slice(i, j), r.id), `${where}: rows with key ${r.key(mem.data[i])}`).toEqual(byId(mem.data.slice(i, j), r.id));
      return;
    }
    for (const row of ch.data.slice(i, j)) expect(row, `${where}: row ${r.id(row)}`).toEqual(whole.get(r.id(row)));
  });
}

/** `ch` reordered to `mem`'s order (after expectSameModuloTies): to compare bytes written from them. */
export function inOrderOf<T, U>(mem: T[], memId: (r: T) => string, ch: U[], chId: (r: U) => string): U[] {
  const m = new Map(ch.map((x) => [chId(x), x]));
  return mem.map((x) => {
    const hit = m.get(memId(x));
    if (hit === undefined) throw new Error(`row ${memId(x)} missing`);
    return hit;
  });
}

/** A CSV stream's text. */
export const textOf = (stream: ReadableStream<Uint8Array>): Promise<string> => new Response(stream).text();

/** Every row of batches, plain or async. */
export async function collect<T>(batches: Iterable<ReadonlyArray<T>> | AsyncIterable<ReadonlyArray<T>>): Promise<T[]> {
  const out: T[] = [];
  for await (const b of batches) out.push(...b);
  return out;
}
