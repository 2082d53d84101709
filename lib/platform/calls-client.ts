import { isAscii } from "node:buffer";
import { PlatformProtocolError } from "./errors";
import { arrayMemberRanges } from "./json-elements";
import { readCallsPage } from "./page-reader";
import { defaultSleep, getJson, type FetchFn, type HttpOptions, type SleepFn } from "./get-json";
import { bucketFor, PLATFORM_REQUESTS_PER_MINUTE, type RequestGate, type TokenBucket } from "./rate-limit";

/**
 * The Calls API client: `GET {calls_url}/calls` with the seed's nine filters and
 * `page`/`perPage` pagination, and `GET {calls_url}/calls/{sessionId}`. Records come
 * back unparsed (`unknown`): the sync parses them so that one bad record is skipped and
 * reported instead of failing a page.
 */

/** The seed's filters of the call list, by their query names. */
export interface CallFilters {
  type?: "audio" | "video" | (string & {});
  mode?: "call" | "meet" | "presenter" | (string & {});
  /** Only calls with exactly this many participants. */
  participantsCount?: number;
  /** 10-digit epoch seconds of the call start. */
  startedAt?: number;
  status?: "rejected" | "ongoing" | "ended" | "unanswered" | (string & {});
  receiverType?: "user" | "group" | (string & {});
  endedAt?: number;
  hasRecording?: boolean;
  uid?: string;
}

const FILTER_KEYS = [
  "type",
  "mode",
  "participantsCount",
  "startedAt",
  "status",
  "receiverType",
  "endedAt",
  "hasRecording",
  "uid",
] as const satisfies readonly (keyof CallFilters)[];

export const MAX_PER_PAGE = 1000;
export const DEFAULT_PER_PAGE = 100;
/**
 * The largest answer read (issue 12 item 10). A full page of 1,000 calls is about 1.5 MB
 * (4 MB with meetings of 12); 32 MB leaves room for large meetings and still bounds what
 * one answer can cost this process: the body is cut at the limit as it streams.
 */
export const MAX_PAGE_BYTES = 32 * 2 ** 20;

export interface Pagination {
  total?: number;
  count?: number;
  perPage?: number;
  currentPage?: number;
  totalPages?: number;
}

export interface CallsPage {
  page: number;
  records: unknown[];
  /**
   * Where each record's JSON text lies in the page as the platform sent it (same order as
   * `records`), when the page could be sliced; the sync stores it as the call's raw record.
   */
  raw?: RawRecords;
  /**
   * Set when the page was read from its bytes (page-reader.ts, the sync's pages): record
   * i is then either an object of its known fields only, with `participantExtras[i]` its
   * participants' unknown keys as JSON, or (participantExtras[i] undefined) the whole
   * record as JSON.parse gives it. Unset: every record is whole.
   */
  participantExtras?: Array<Array<string | null> | undefined>;
  pagination: Pagination;
  /** Time from request to parsed JSON (retries included), for the benchmark. */
  fetchMs: number;
}

/**
 * The records' texts as byte ranges of the page's UTF-8 body: record i is
 * `bytes[ranges[2i], ranges[2i + 1])`. Kept as bytes so that the sync can hash a record
 * and hand it to its write worker (which takes the page's memory over without a copy)
 * without decoding 1,000 strings a page on its busiest thread.
 */
export interface RawRecords {
  bytes: Buffer;
  ranges: number[];
}

/** Record i's text (decoded from its own bytes: one-byte whenever it is ASCII). */
export function rawRecordText(raw: RawRecords, i: number): string {
  return raw.bytes.toString("utf8", raw.ranges[2 * i], raw.ranges[2 * i + 1]);
}

export interface CallsClientOptions {
  callsUrl: string;
  apiKey: string;
  onBehalfOf?: string | null;
  appId: string;
  timeoutMs?: number;
  maxAttempts?: number;
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  maxRetryAfterMs?: number;
  /** Client-side budget (default the platform's 20,000 a minute per app). */
  requestsPerMinute?: number;
  /** Answers over this size are refused (default MAX_PAGE_BYTES). */
  maxPageBytes?: number;
  bucket?: TokenBucket;
  /** Process-wide cap on requests in flight, shared with every other app's client (SYNC_CONCURRENCY). */
  gate?: RequestGate;
  fetch?: FetchFn;
  sleep?: SleepFn;
  random?: () => number;
}

export interface PagesOptions {
  perPage?: number;
  /** The first page to fetch (default 1): a resumed backfill continues where it stopped. */
  startPage?: number;
  /** Refuse to walk more pages than this (a server that never ends). */
  maxPages?: number;
  /**
   * Pages requested ahead of the consumer (0 = strictly one at a time): while the
   * consumer handles page p, pages p+1..p+prefetch are in flight. Pages are still
   * yielded in order, whatever order their answers arrive in.
   */
  prefetch?: number;
  signal?: AbortSignal;
}

export interface CallsClient {
  readonly appId: string;
  listCallsPage(filters: CallFilters, page: number, perPage: number, signal?: AbortSignal): Promise<CallsPage>;
  pages(filters?: CallFilters, options?: PagesOptions): AsyncGenerator<CallsPage, void, undefined>;
  getCall(sessionId: string, signal?: AbortSignal): Promise<unknown>;
}

function toInt(v: unknown): number | undefined {
  const n = typeof v === "string" ? Number(v) : v;
  return typeof n === "number" && Number.isFinite(n) ? Math.trunc(n) : undefined;
}

export function readPagination(meta: unknown): Pagination {
  const p = meta && typeof meta === "object" ? (meta as Record<string, unknown>).pagination : undefined;
  if (!p || typeof p !== "object") return {};
  const r = p as Record<string, unknown>;
  return {
    total: toInt(r.total),
    count: toInt(r.count),
    perPage: toInt(r.per_page ?? r.perPage),
    currentPage: toInt(r.current_page ?? r.currentPage),
    totalPages: toInt(r.total_pages ?? r.totalPages),
  };
}

export function filtersToQuery(filters: CallFilters): URLSearchParams {
  const q = new URLSearchParams();
  for (const key of FILTER_KEYS) {
    const v = filters[key];
    if (v === undefined || v === null || v === "") continue;
    q.set(key, typeof v === "boolean" ? (v ? "true" : "false") : String(v));
  }
  return q;
}

function firstSessionId(records: unknown[]): string | undefined {
  const r = records[0];
  if (!r || typeof r !== "object") return undefined;
  const id = (r as { sessionId?: unknown }).sessionId;
  return typeof id === "string" || typeof id === "number" ? String(id) : undefined;
}

export function createCallsClient(options: CallsClientOptions): CallsClient {
  const base = options.callsUrl.replace(/\/+$/, "");
  const headers: Record<string, string> = { apikey: options.apiKey, accept: "application/json" };
  if (options.onBehalfOf) headers.onBehalfOf = options.onBehalfOf;
  const label = `Calls API of app ${options.appId}`;
  const http: HttpOptions = {
    appId: options.appId,
    label,
    headers,
    timeoutMs: options.timeoutMs ?? 15_000,
    maxAttempts: Math.max(1, options.maxAttempts ?? 6),
    baseBackoffMs: options.baseBackoffMs ?? 250,
    maxBackoffMs: options.maxBackoffMs ?? 10_000,
    maxRetryAfterMs: options.maxRetryAfterMs ?? 60_000,
    fetch: options.fetch ?? ((input, init) => fetch(input, init)),
    sleep: options.sleep ?? defaultSleep,
    bucket: options.bucket ?? bucketFor(options.appId, options.requestsPerMinute ?? PLATFORM_REQUESTS_PER_MINUTE),
    gate: options.gate,
    secrets: [options.apiKey],
    random: options.random,
    maxBodyBytes: options.maxPageBytes ?? MAX_PAGE_BYTES,
  };

  const pageSize = (perPage: number) => Math.min(MAX_PER_PAGE, Math.max(1, Math.trunc(perPage)));

  function listUrl(filters: CallFilters, page: number, perPage: number): string {
    const q = filtersToQuery(filters);
    q.set("page", String(page));
    q.set("perPage", String(pageSize(perPage)));
    return `${base}/calls?${q.toString()}`;
  }

  /** A list page's answer as parsed (read as latin1: see BodyReading), checked and sliced. */
  function pageOf(body: unknown, bytes: Buffer, page: number, perPage: number, fetchMs: number): CallsPage {
    if (!body || typeof body !== "object" || !Array.isArray((body as { data?: unknown }).data)) {
      throw new PlatformProtocolError(`${label}: page ${page} is not {data: [...], meta}`, options.appId);
    }
    const b = body as { data: unknown[]; meta?: unknown };
    if (b.data.length > MAX_PER_PAGE) {
      // More than the platform ever serves: its page numbers cannot be trusted either, and
      // one page must not become one unbounded write batch.
      throw new PlatformProtocolError(
        `${label}: page ${page} holds ${b.data.length.toLocaleString("en")} calls, more than the platform's maximum of ${MAX_PER_PAGE.toLocaleString("en")} a page (perPage=${pageSize(perPage)} was asked); refused`,
        options.appId,
      );
    }
    const ranges = arrayMemberRanges(bytes, "data");
    // Slices only when they provably match the parsed records (same count, no repeated key).
    const raw = ranges && ranges.length === 2 * b.data.length ? { bytes, ranges } : undefined;
    let records = b.data;
    if (raw) {
      // Records with other bytes than ASCII: parsed again from their own UTF-8 text.
      for (let i = 0; i < records.length; i++) {
        if (!isAscii(bytes.subarray(raw.ranges[2 * i], raw.ranges[2 * i + 1]))) records[i] = JSON.parse(rawRecordText(raw, i));
      }
    } else if (!isAscii(bytes)) {
      // Not sliced (rare: a repeated data key): the whole page again, as UTF-8.
      records = (JSON.parse(bytes.toString("utf8")) as { data: unknown[] }).data;
    }
    return { page, records, raw, pagination: readPagination(b.meta), fetchMs };
  }

  async function listCallsPage(filters: CallFilters, page: number, perPage: number, signal?: AbortSignal): Promise<CallsPage> {
    const t0 = performance.now();
    const { body, bytes } = await getJson(listUrl(filters, page, perPage), http, signal, `page ${page}`, "latin1");
    return pageOf(body, bytes, page, perPage, performance.now() - t0);
  }

  /** A list page fetched ahead, kept as bytes until the consumer takes it (see `pages`). */
  async function fetchPage(filters: CallFilters, page: number, perPage: number, signal: AbortSignal): Promise<{ bytes: Buffer; fetchMs: number }> {
    const t0 = performance.now();
    const { bytes } = await getJson(listUrl(filters, page, perPage), http, signal, `page ${page}`, "unparsed");
    return { bytes, fetchMs: performance.now() - t0 };
  }

  async function* pages(filters: CallFilters = {}, opts: PagesOptions = {}): AsyncGenerator<CallsPage, void, undefined> {
    const perPage = Math.min(MAX_PER_PAGE, Math.max(1, opts.perPage ?? DEFAULT_PER_PAGE));
    const maxPages = opts.maxPages ?? 100_000;
    const prefetch = Math.max(0, opts.prefetch ?? 1);
    // Our own controller, so that requests still in flight stop when the consumer stops.
    const local = new AbortController();
    const signal = opts.signal ? AbortSignal.any([opts.signal, local.signal]) : local.signal;
    // Pages fetched ahead wait as bytes, and are parsed when the consumer takes them. Parsed
    // on arrival, the pages in line (up to SYNC_CONCURRENCY of them) held their records
    // as JS objects through several young-generation collections, which promoted them to
    // the old generation: the sync process's largest cost in garbage collection.
    const inflight = new Map<number, Promise<{ bytes: Buffer; fetchMs: number }>>();
    const start = (p: number) => {
      if (inflight.has(p) || p > maxPages) return;
      const pr = fetchPage(filters, p, perPage, signal);
      pr.catch(() => undefined); // awaited later; avoid an unhandled rejection meanwhile
      inflight.set(p, pr);
    };
    const take = async (p: number): Promise<CallsPage> => {
      const fetched = await inflight.get(p)!;
      inflight.delete(p);
      const t0 = performance.now();
      // Read from the bytes: one pass, the fields the sync types (decision 0022). Anything
      // the reader does not take as plain JSON of the usual shape goes the JSON.parse way.
      const read = readCallsPage(fetched.bytes, MAX_PER_PAGE);
      if (read) {
        const { records, ranges, extras, meta } = read;
        const fetchMs = fetched.fetchMs + performance.now() - t0;
        return { page: p, records, raw: { bytes: fetched.bytes, ranges }, participantExtras: extras, pagination: readPagination(meta), fetchMs };
      }
      let body: unknown;
      try {
        body = JSON.parse(fetched.bytes.toString("latin1"));
      } catch {
        // Not JSON (a truncated answer): fetched again through the retrying path.
        return listCallsPage(filters, p, perPage, signal);
      }
      return pageOf(body, fetched.bytes, p, perPage, fetched.fetchMs + performance.now() - t0);
    };
    try {
      let totalPages: number | undefined;
      let prevFirst: string | undefined;
      const first = Math.max(1, Math.trunc(opts.startPage ?? 1));
      for (let page = first; ; page++) {
        if (page > maxPages) {
          throw new PlatformProtocolError(`${label}: more than ${maxPages} pages; stopping`, options.appId);
        }
        start(page);
        const res = await take(page);
        if (res.records.length === 0) return;
        const firstId = firstSessionId(res.records);
        if (page > first && firstId !== undefined && firstId === prevFirst) {
          throw new PlatformProtocolError(
            `${label}: page ${page} starts with the same call as page ${page - 1}; the server seems to ignore 'page'`,
            options.appId,
          );
        }
        prevFirst = firstId;
        // The server's page count is authoritative: it may have ignored our perPage.
        if (res.pagination.totalPages !== undefined) totalPages = res.pagination.totalPages;
        const more = totalPages === undefined || page < totalPages;
        if (more) {
          for (let k = 1; k <= prefetch; k++) {
            if (totalPages === undefined ? k === 1 : page + k <= totalPages) start(page + k);
          }
        }
        yield res;
        if (!more) return;
      }
    } finally {
      local.abort();
    }
  }

  async function getCall(sessionId: string, signal?: AbortSignal): Promise<unknown> {
    const { body } = await getJson(`${base}/calls/${encodeURIComponent(sessionId)}`, http, signal, `call ${sessionId}`);
    if (!body || typeof body !== "object" || !("data" in body)) {
      throw new PlatformProtocolError(`${label}: call ${sessionId} answer is not {data: call}`, options.appId);
    }
    return (body as { data: unknown }).data;
  }

  return { appId: options.appId, listCallsPage, pages, getCall };
}
