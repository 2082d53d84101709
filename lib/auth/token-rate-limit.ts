import { HttpError } from "@/lib/http/errors";

/**
 * Per-token rate limit: a token bucket per API token, `perMinute` requests a minute
 * on average with bursts up to the same number. A script that runs away is answered
 * 429 with Retry-After instead of taking the server from everyone else.
 *
 * In memory, per process: a limit, not an accounting (a restart forgives). The buckets
 * live on globalThis under a registry symbol because route handlers run from Next's
 * bundle while the lean API path runs the same file loaded by tsx: two copies of this
 * module must share one bucket per token.
 */
interface Bucket {
  tokens: number;
  atMs: number;
}

const BUCKETS = Symbol.for("callboard.tokenRateBuckets");
/** Buckets idle this long are full again: forgetting them loses nothing. */
const FORGET_AFTER_MS = 10 * 60_000;

function buckets(): Map<number, Bucket> {
  const g = globalThis as unknown as Record<symbol, Map<number, Bucket> | undefined>;
  return (g[BUCKETS] ??= new Map());
}

export function tooManyTokenRequests(retryAfterSeconds: number): HttpError {
  return new HttpError(
    429,
    "rate_limited",
    `Too many requests with this API token; retry in ${retryAfterSeconds} s.`,
    { retryAfterSeconds },
    { "Retry-After": String(retryAfterSeconds) },
  );
}

/** Takes one request from the token's bucket; throws 429 when it is empty. `perMinute` 0: no limit. */
export function takeTokenRequest(tokenId: number, perMinute: number, now = Date.now()): void {
  if (perMinute <= 0) return;
  const all = buckets();
  const refillPerMs = perMinute / 60_000;
  const bucket = all.get(tokenId) ?? { tokens: perMinute, atMs: now };
  bucket.tokens = Math.min(perMinute, bucket.tokens + (now - bucket.atMs) * refillPerMs);
  bucket.atMs = now;
  all.set(tokenId, bucket);
  if (all.size > 1_000) forgetIdle(all, now);
  if (bucket.tokens < 1) throw tooManyTokenRequests(Math.max(1, Math.ceil((1 - bucket.tokens) / refillPerMs / 1000)));
  bucket.tokens -= 1;
}

function forgetIdle(all: Map<number, Bucket>, now: number): void {
  for (const [id, b] of all) if (now - b.atMs > FORGET_AFTER_MS) all.delete(id);
}

export function resetTokenRateLimitsForTests(): void {
  buckets().clear();
}
