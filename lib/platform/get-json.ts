import { setTimeout as delay } from "node:timers/promises";
import {
  PlatformAuthError,
  PlatformHttpError,
  PlatformNotFoundError,
  PlatformProtocolError,
  PlatformUnavailableError,
  describeDetail,
  platformErrorDetail,
} from "./errors";
import type { RequestGate, TokenBucket } from "./rate-limit";

/**
 * One JSON GET with the platform's failure modes handled: per-request timeout (headers)
 * and a stall timeout on the body, retries with exponential backoff and full jitter on
 * 429/5xx/connection errors/broken JSON, `Retry-After` / `X-Rate-Limit-Reset` honoured,
 * 401/403 and other 4xx surfaced at once.
 */
export type FetchFn = (input: string, init: RequestInit) => Promise<Response>;
export type SleepFn = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface HttpOptions {
  appId: string;
  /** What the request is, for messages: "Calls API of app X". */
  label: string;
  headers: Record<string, string>;
  timeoutMs: number;
  maxAttempts: number;
  baseBackoffMs: number;
  maxBackoffMs: number;
  /** Upper bound on a server-requested wait (Retry-After / X-Rate-Limit-Reset). */
  maxRetryAfterMs: number;
  fetch: FetchFn;
  sleep: SleepFn;
  bucket?: TokenBucket;
  /** Requests in flight across the process (SYNC_CONCURRENCY); held only while a request is on the wire. */
  gate?: RequestGate;
  /** Strings that must never appear in an error message (the API key). */
  secrets: string[];
  /**
   * Answers larger than this are refused (never retried): the body is read as it streams
   * and the request is cut at the limit, so a hostile or broken server cannot make this
   * process hold (and then parse) an answer of any size. Default: no limit.
   */
  maxBodyBytes?: number;
  random?: () => number;
}

export const defaultSleep: SleepFn = (ms, signal) => delay(ms, undefined, { signal }).then(() => undefined);

class Retryable extends Error {
  constructor(
    message: string,
    readonly retryAfterMs?: number,
    options?: { cause?: unknown },
    /** A 429: the wait applies to the whole app, not just this request. */
    readonly rateLimited = false,
  ) {
    super(message, options);
  }
}

function scrub(text: string, secrets: string[]): string {
  let out = text;
  for (const s of secrets) if (s && s.length >= 4) out = out.split(s).join("[redacted]");
  return out;
}

/** `Retry-After` (seconds or HTTP date), else `X-Rate-Limit-Reset` (epoch seconds or ms). */
export function retryAfterMs(headers: Headers, now = Date.now()): number | undefined {
  const ra = headers.get("retry-after")?.trim();
  if (ra) {
    if (/^\d+(\.\d+)?$/.test(ra)) return Math.round(Number(ra) * 1000);
    const at = Date.parse(ra);
    if (Number.isFinite(at)) return Math.max(0, at - now);
  }
  const reset = headers.get("x-rate-limit-reset")?.trim() ?? headers.get("x-ratelimit-reset")?.trim();
  if (reset && /^\d+(\.\d+)?$/.test(reset)) {
    const n = Number(reset);
    const atMs = n > 1e12 ? n : n * 1000;
    // A small number is a delta in seconds, not an epoch.
    if (n < 1e9) return Math.round(n * 1000);
    return Math.max(0, atMs - now);
  }
  return undefined;
}

/** The answer is over HttpOptions.maxBodyBytes: refused, not retried (it would be as large again). */
class BodyTooLarge extends Error {
  constructor(readonly limit: number, readonly announced: number | undefined) {
    super(`larger than the limit of ${limit} bytes`);
  }
}

async function readBody(res: Response, controller: AbortController, stallMs: number, maxBytes: number): Promise<Buffer> {
  if (!res.body) return Buffer.alloc(0);
  const announced = Number(res.headers.get("content-length") ?? NaN);
  if (announced > maxBytes) {
    controller.abort(new BodyTooLarge(maxBytes, announced));
    throw new BodyTooLarge(maxBytes, announced);
  }
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const timer = setTimeout(() => controller.abort(new Error(`response body stalled for ${stallMs} ms`)), stallMs);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        controller.abort(new BodyTooLarge(maxBytes, undefined));
        throw new BodyTooLarge(maxBytes, undefined);
      }
      chunks.push(value);
      timer.refresh();
    }
  } finally {
    clearTimeout(timer);
  }
  return Buffer.concat(chunks, size);
}

const isRedirect = (status: number) => status >= 300 && status < 400 && status !== 304;

/**
 * The message for an answer that redirects (followed by no client here): names the status
 * and where it pointed (origin only: a Location's path or query may carry anything).
 */
export function describeRedirect(res: Response, requestUrl: string): string {
  const location = res.headers.get("location");
  let target = "no Location";
  if (location) {
    try {
      const to = new URL(location, requestUrl);
      target = to.origin === new URL(requestUrl).origin ? `${to.origin} (the same origin)` : `${to.origin} (another origin)`;
    } catch {
      target = "an unreadable Location";
    }
  }
  return `answered HTTP ${res.status}, a redirect to ${target}; redirects are not followed, so the credentials are never sent to another address: check the configured URL`;
}

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(bytes < 2 ** 20 ? 2 : 0)} MB`;

function parseJson(buf: Buffer): unknown {
  return JSON.parse(buf.toString("utf8"));
}

export interface JsonResponse {
  status: number;
  body: unknown;
  headers: Headers;
  /** The body's bytes as received (the sync slices raw records out of them). */
  bytes: Buffer;
}

/**
 * How a 2xx body is read before JSON.parse: as UTF-8, or byte for byte as latin1. Read
 * as latin1, a page is a one-byte string that V8 parses about twice as fast as the
 * two-byte string UTF-8 gives it as soon as one byte is not ASCII (one uid with an umlaut
 * on a page of 1,000 calls is enough), and the decode is a plain copy. The structure, the
 * numbers and every ASCII string come out the same as from UTF-8 (JSON's syntax is
 * ASCII, and a multi-byte sequence only ever occurs inside a string); a string holding
 * other bytes does not, so the caller parses such a part again from its UTF-8 text.
 * "unparsed": the caller parses the bytes when it needs them (and fetches again an answer
 * that turns out not to be JSON).
 */
export type BodyReading = "utf8" | "latin1" | "unparsed";

function causeText(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? ` (${err.cause.message})` : "";
  return `${err.message}${cause}`;
}

/** `what` names the request in messages ("page 3"); the URL itself is never quoted. */
export async function getJson(
  url: string,
  opts: HttpOptions,
  signal?: AbortSignal,
  what = "an answer",
  reading: BodyReading = "utf8",
): Promise<JsonResponse> {
  const random = opts.random ?? Math.random;
  let last: Retryable | undefined;
  for (let attempt = 1; attempt <= opts.maxAttempts; attempt++) {
    signal?.throwIfAborted();
    if (opts.bucket) await opts.bucket.take((ms) => opts.sleep(ms, signal));
    const release = opts.gate ? await opts.gate.acquire(signal) : undefined;
    try {
      return await attemptOnce(url, opts, signal, what, reading);
    } catch (err) {
      if (!(err instanceof Retryable)) throw err;
      signal?.throwIfAborted();
      last = err;
      // The app's other requests (pages in flight) wait out the platform's Retry-After too.
      if (err.rateLimited && err.retryAfterMs !== undefined) opts.bucket?.pause(Math.min(opts.maxRetryAfterMs, err.retryAfterMs));
      if (attempt === opts.maxAttempts) break;
      const backoff = random() * Math.min(opts.maxBackoffMs, opts.baseBackoffMs * 2 ** (attempt - 1));
      const wait =
        err.retryAfterMs !== undefined
          ? Math.min(opts.maxRetryAfterMs, err.retryAfterMs) + random() * opts.baseBackoffMs
          : backoff;
      release?.();
      await opts.sleep(Math.round(wait), signal);
    } finally {
      release?.();
    }
  }
  throw new PlatformUnavailableError(
    scrub(`${opts.label}: gave up after ${opts.maxAttempts} attempts; last failure: ${last?.message ?? "unknown"}`, opts.secrets),
    { appId: opts.appId, attempts: opts.maxAttempts, cause: last },
  );
}

async function attemptOnce(
  url: string,
  opts: HttpOptions,
  signal: AbortSignal | undefined,
  what: string,
  reading: BodyReading,
): Promise<JsonResponse> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  let timedOut = false;
  const headerTimer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error(`no response within ${opts.timeoutMs} ms`));
  }, opts.timeoutMs);
  try {
    let res: Response;
    try {
      // "manual": a redirect is answered, never followed, so the apikey header is never sent
      // to the address a Location names (fetch keeps custom headers across origins).
      res = await opts.fetch(url, { method: "GET", headers: opts.headers, signal: controller.signal, redirect: "manual" });
    } catch (err) {
      if (signal?.aborted) throw err;
      throw new Retryable(timedOut ? `no response within ${opts.timeoutMs} ms` : `connection failed: ${causeText(err)}`, undefined, { cause: err });
    } finally {
      clearTimeout(headerTimer);
    }
    if (isRedirect(res.status)) {
      controller.abort(new Error("redirect refused"));
      throw new PlatformHttpError(`${opts.label}: ${describeRedirect(res, url)}`, { appId: opts.appId, status: res.status });
    }
    let buf: Buffer;
    try {
      buf = await readBody(res, controller, opts.timeoutMs, opts.maxBodyBytes ?? Number.POSITIVE_INFINITY);
    } catch (err) {
      if (signal?.aborted) throw err;
      if (err instanceof BodyTooLarge) {
        const size = err.announced === undefined ? `more than ${mb(err.limit)}` : `${mb(err.announced)}`;
        throw new PlatformProtocolError(
          `${opts.label}: ${what} is ${size}, over the limit of ${mb(err.limit)} for one answer; refused without reading it whole (the platform's pages of at most 1,000 calls are far smaller)`,
          opts.appId,
        );
      }
      const why = controller.signal.reason instanceof Error ? controller.signal.reason.message : causeText(err);
      throw new Retryable(`HTTP ${res.status}, body broken: ${why}`, undefined, { cause: err });
    }
    const status = res.status;
    if (status >= 200 && status < 300) {
      if (reading === "unparsed") return { status, body: undefined, headers: res.headers, bytes: buf };
      const text = buf.toString(reading);
      try {
        return { status, body: JSON.parse(text), headers: res.headers, bytes: buf };
      } catch (err) {
        throw new Retryable(`HTTP ${status} with invalid or truncated JSON (${buf.length} bytes)`, undefined, { cause: err });
      }
    }
    let errBody: unknown;
    try {
      errBody = parseJson(buf);
    } catch {
      errBody = undefined;
    }
    const detail = platformErrorDetail(errBody);
    const text = scrub(describeDetail(status, detail), opts.secrets);
    if (status === 429) throw new Retryable(`${text} (rate limited)`, retryAfterMs(res.headers), undefined, true);
    if (status >= 500 || status === 408) throw new Retryable(text, retryAfterMs(res.headers));
    if (status === 401 || status === 403) {
      throw new PlatformAuthError(`${opts.label} refused the API key (${text}); check the app's API key and region`, {
        appId: opts.appId,
        status,
        code: detail.code,
      });
    }
    const E = status === 404 ? PlatformNotFoundError : PlatformHttpError;
    throw new E(`${opts.label}: ${text}`, { appId: opts.appId, status, code: detail.code });
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
}
