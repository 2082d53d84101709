/**
 * Growable typed-array columns of the in-memory analytics store (store.ts). Each
 * starts in the narrowest array that holds typical values and widens itself to
 * Float64 the first time a value does not fit, so compactness never costs exactness.
 */

export type NumArray = Uint8Array | Uint16Array | Int32Array | Float64Array;

type Kind = "u8" | "u16" | "i32" | "f64";

function make(kind: Kind, n: number): NumArray {
  switch (kind) {
    case "u8":
      return new Uint8Array(n);
    case "u16":
      return new Uint16Array(n);
    case "i32":
      return new Int32Array(n);
    case "f64":
      return new Float64Array(n);
  }
}

function fits(kind: Kind, v: number): boolean {
  switch (kind) {
    case "u8":
      return v === (v & 0xff);
    case "u16":
      return v === (v & 0xffff);
    case "i32":
      return v === (v | 0);
    case "f64":
      return true;
  }
}

/** An integer column (pk, times, codes, counts); widens to Float64 on overflow. */
export class IntColumn {
  a: NumArray;
  private kind: Kind;

  constructor(kind: Exclude<Kind, "f64">, capacity: number) {
    this.kind = kind;
    this.a = make(kind, capacity);
  }

  set(i: number, v: number): void {
    if (!fits(this.kind, v)) this.widen();
    this.a[i] = v;
  }

  grow(capacity: number): void {
    if (capacity <= this.a.length) return;
    const next = make(this.kind, capacity);
    next.set(this.a);
    this.a = next;
  }

  private widen(): void {
    const next = new Float64Array(this.a.length);
    for (let i = 0; i < this.a.length; i++) next[i] = this.a[i];
    this.a = next;
    this.kind = "f64";
  }

  get bytes(): number {
    return this.a.byteLength;
  }
}

/**
 * Decimal minutes. The platform sends them with at most 3 decimals, so they are held
 * as exact integer thousandths (Int32, summed exactly in a double) — `scale` 1000;
 * the first value that is not an exact thousandth (or too large) switches the column
 * to plain Float64 minutes — `scale` 1. A sum over the column divided by `scale` is
 * the sum of the stored values.
 */
export class MinutesColumn {
  a: Int32Array | Float64Array;
  scale: 1000 | 1 = 1000;
  /**
   * An upper bound of |value| (thousandths) of every value ever held while `scale` is
   * 1000: n × maxAbs ≤ 2^53 proves any sum of n of them exact in a double, in any order
   * (what lets a report add pre-summed blocks instead of the values one by one).
   */
  maxAbs = 0;

  constructor(capacity: number) {
    this.a = new Int32Array(capacity);
  }

  set(i: number, v: number): void {
    if (this.scale === 1000) {
      const m = Math.round(v * 1000);
      if (m / 1000 === v && m === (m | 0)) {
        this.a[i] = m;
        if (m > this.maxAbs || -m > this.maxAbs) this.maxAbs = Math.abs(m);
        return;
      }
      this.widen();
    }
    this.a[i] = v;
  }

  /** Adds `v` to slot i (exactly, in thousandths, while both are exact thousandths). */
  add(i: number, v: number): void {
    if (this.scale === 1000) {
      const m = Math.round(v * 1000);
      const sum = this.a[i] + m;
      if (m / 1000 === v && sum === (sum | 0)) {
        this.a[i] = sum;
        if (sum > this.maxAbs || -sum > this.maxAbs) this.maxAbs = Math.abs(sum);
        return;
      }
      this.widen();
    }
    this.a[i] += v;
  }

  grow(capacity: number): void {
    if (capacity <= this.a.length) return;
    const next = this.scale === 1000 ? new Int32Array(capacity) : new Float64Array(capacity);
    next.set(this.a);
    this.a = next;
  }

  private widen(): void {
    const next = new Float64Array(this.a.length);
    for (let i = 0; i < this.a.length; i++) next[i] = this.a[i] / 1000;
    this.a = next;
    this.scale = 1;
  }

  get bytes(): number {
    return this.a.byteLength;
  }
}
