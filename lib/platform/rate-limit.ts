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

  constructor(
    readonly perMinute: number,
    readonly burst = Math.max(1, Math.min(200, Math.floor(perMinute / 100))),
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = burst;
    this.last = now();
    this.ratePerMs = Math.max(perMinute - burst, 1) / 60_000;
  }

  /** Takes a token if one is there; otherwise says how long to wait for one. */
  tryTake(): number {
    const t = this.now();
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
