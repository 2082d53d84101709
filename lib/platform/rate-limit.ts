/**
 * Client-side token bucket: one process never exceeds the platform's budget for an app
 * (20,000 requests a minute). The refill rate leaves room for the burst, so that no
 * 60-second window can hold more than `perMinute` requests.
 */
export const PLATFORM_REQUESTS_PER_MINUTE = 20_000;

export class TokenBucket {
  private tokens: number;
  private last: number;
  private readonly ratePerMs: number;
  /** Until when (this.now() clock) the platform asked this app to wait: a 429's Retry-After. */
  private pausedUntil = 0;

  constructor(
    readonly perMinute: number,
    readonly burst = Math.max(1, Math.min(200, Math.floor(perMinute / 100))),
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = burst;
    this.last = now();
    this.ratePerMs = Math.max(perMinute - burst, 1) / 60_000;
  }

  /**
   * The platform said "too many requests, retry after ms": every request of this app
   * waits that long, not only the one that was refused — with several pages in flight,
   * the others would otherwise keep hitting the limit.
   */
  pause(ms: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, this.now() + Math.max(0, ms));
  }

  /** Takes a token if one is there; otherwise says how long to wait for one. */
  tryTake(): number {
    const t = this.now();
    if (t < this.pausedUntil) return Math.ceil(this.pausedUntil - t);
    this.tokens = Math.min(this.burst, this.tokens + (t - this.last) * this.ratePerMs);
    this.last = t;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.ceil((1 - this.tokens) / this.ratePerMs);
  }

  async take(sleep: (ms: number) => Promise<void>): Promise<void> {
    for (;;) {
      const wait = this.tryTake();
      if (wait === 0) return;
      await sleep(wait);
    }
  }
}

const buckets = new Map<string, TokenBucket>();

/** The process-wide bucket of one app (all clients of that app share it). */
export function bucketFor(key: string, perMinute = PLATFORM_REQUESTS_PER_MINUTE): TokenBucket {
  const k = `${key}\u0000${perMinute}`;
  let b = buckets.get(k);
  if (!b) {
    b = new TokenBucket(perMinute);
    buckets.set(k, b);
  }
  return b;
}

/**
 * A process-wide cap on requests in flight to the platform, shared by every app syncing
 * at once (SYNC_CONCURRENCY): each app may keep several pages in flight, but ten apps
 * syncing together do not open ten times as many connections.
 */
export class RequestGate {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private limit: number) {}

  setLimit(limit: number): void {
    this.limit = Math.max(1, Math.floor(limit));
    while (this.active < this.limit && this.waiting.length > 0) {
      this.active++;
      this.waiting.shift()!();
    }
  }

  get inFlight(): number {
    return this.active;
  }

  /** Resolves when a slot is free; call the returned function to give it back (once). */
  async acquire(signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if (this.active < this.limit) {
      this.active++;
    } else {
      await new Promise<void>((resolve, reject) => {
        const go = () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        };
        const onAbort = () => {
          const i = this.waiting.indexOf(go);
          if (i >= 0) this.waiting.splice(i, 1);
          reject(signal?.reason);
        };
        this.waiting.push(go);
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next(); // the slot passes straight to the next waiter
      else this.active--;
    };
  }
}

const globalGate = globalThis as unknown as { callboardRequestGate?: RequestGate };

/** The process's gate, sized to `limit` (the latest configured value wins). */
export function requestGate(limit: number): RequestGate {
  globalGate.callboardRequestGate ??= new RequestGate(limit);
  globalGate.callboardRequestGate.setLimit(limit);
  return globalGate.callboardRequestGate;
}
