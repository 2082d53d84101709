import { HttpError } from "@/lib/http/errors";
import { MODES, RECEIVER_TYPES, STATUSES, TYPES, type CallTypeValue, type ModeValue, type ReceiverTypeValue, type StatusValue } from "./dims";
import { COMPARE_MODES, type CompareMode } from "./compare-range";
import { MAX_APPS_PER_QUERY, SORT_KEYS, type SortKey } from "./report-registry";
import { isValidTimeZone } from "@/lib/time/tz";

export { SORT_KEYS, type SortKey };

/**
 * The one filter model of every analytics report and route. Query names are part of the
 * product contract (docs/api.md). `from`/`to` are epoch seconds on the call's start
 * (`start_at`): `from` inclusive, `to` exclusive.
 */
export const MAX_PER_PAGE = 1000;
export const DEFAULT_PER_PAGE = 50;

export interface Filters {
  /** Platform app ids (`app`, repeatable); empty = every app the caller may see. */
  apps: string[];
  type?: CallTypeValue;
  mode?: ModeValue;
  status?: StatusValue;
  receiverType?: ReceiverTypeValue;
  hasRecording?: boolean;
  uid?: string;
  /**
   * The participants reports only (`person`): keep the rows whose uid contains this text,
   * ASCII letters in either case (lib/analytics/person.ts). `uid` keeps the calls a uid is in,
   * so it lists everyone in them; this finds the person's own row(s). Other reports ignore it.
   */
  person?: string;
  participantsCount?: number;
  /**
   * Beyond the contract (the heatmap's drill-down, lib/analytics/running-hours.ts): keep the
   * calls running during that local weekday (`weekday`, 0 = Sunday … 6) and/or hour
   * (`hour`, 0–23) in `tz`, as the heatmap counts them. With either, `from`/`to` bound the
   * hours examined (as on the heatmap), not the calls' start.
   */
  weekday?: number;
  hour?: number;
  from?: number;
  to?: number;
  /** IANA zone of day and hour buckets. */
  tz: string;
  /** What the totals compare [from, to) with (lib/analytics/compare-range.ts); other reports ignore it. */
  compare?: CompareMode;
  page: number;
  perPage: number;
  sort: SortKey;
  order: "asc" | "desc";
  format: "json" | "csv";
}

export const DEFAULT_FILTERS: Filters = { apps: [], tz: "UTC", page: 1, perPage: DEFAULT_PER_PAGE, sort: "start", order: "desc", format: "json" };

/** Builds Filters from partial values (library callers, tests). */
export function filters(partial: Partial<Filters> = {}): Filters {
  return { ...DEFAULT_FILTERS, ...partial };
}

export type SearchParamsInput = URLSearchParams | Record<string, string | string[] | undefined>;

const invalid = (parameter: string, message: string, allowed?: readonly string[]) =>
  new HttpError(400, "invalid_parameter", `${parameter}: ${message}`, allowed ? { parameter, allowed: [...allowed] } : { parameter });

function getAll(input: SearchParamsInput, name: string): string[] {
  if (input instanceof URLSearchParams) return input.getAll(name);
  const v = input[name];
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

function single(input: SearchParamsInput, name: string): string | undefined {
  const all = getAll(input, name);
  if (all.length > 1) throw invalid(name, "may be given only once");
  return all[0];
}

function oneOf<T extends string>(input: SearchParamsInput, name: string, allowed: readonly T[]): T | undefined {
  const v = single(input, name);
  if (v === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(v)) throw invalid(name, `"${v}" is not one of ${allowed.join(", ")}`, allowed);
  return v as T;
}

function integer(input: SearchParamsInput, name: string, min: number, max: number, what: string): number | undefined {
  const v = single(input, name);
  if (v === undefined) return undefined;
  if (!/^\d{1,15}$/.test(v.trim())) throw invalid(name, `"${v}" is not ${what}`);
  const n = Number(v.trim());
  if (n < min || n > max) throw invalid(name, `must be between ${min} and ${max}`);
  return n;
}

/** Latest accepted epoch second (year 9999). */
const MAX_EPOCH = 253_402_300_799;

/**
 * Parses and validates the query of an analytics route (or a page's searchParams).
 * Unknown parameters are ignored; a bad value throws HttpError 400 naming the parameter
 * (`error.parameter`) and, for enumerations, the allowed values (`error.allowed`).
 */
export function parseFilters(input: SearchParamsInput): Filters {
  const apps = getAll(input, "app").map((a) => a.trim());
  if (apps.some((a) => a === "" || a.length > 63)) throw invalid("app", "must be a platform app id");
  if (apps.length > MAX_APPS_PER_QUERY) throw invalid("app", `at most ${MAX_APPS_PER_QUERY} apps`);
  const hasRecording = oneOf(input, "hasRecording", ["true", "false"] as const);
  const uid = single(input, "uid");
  if (uid !== undefined && (uid.length === 0 || uid.length > 256)) throw invalid("uid", "must be 1 to 256 characters");
  const person = single(input, "person")?.trim();
  if (person !== undefined && person.length > 256) throw invalid("person", "must be at most 256 characters");
  const from = integer(input, "from", 0, MAX_EPOCH, "epoch seconds");
  const to = integer(input, "to", 0, MAX_EPOCH, "epoch seconds");
  if (from !== undefined && to !== undefined && from > to) throw invalid("from", `must not be after to (${from} > ${to})`);
  const tz = single(input, "tz") ?? "UTC";
  if (!isValidTimeZone(tz)) throw invalid("tz", `"${tz}" is not an IANA time zone (e.g. UTC, Europe/Berlin, Asia/Kolkata)`);
  const perPageRaw = single(input, "perPage");
  if (perPageRaw !== undefined && /^\d+$/.test(perPageRaw.trim()) && Number(perPageRaw) > MAX_PER_PAGE) {
    throw invalid("perPage", `at most ${MAX_PER_PAGE}`);
  }
  return {
    apps: [...new Set(apps)],
    type: oneOf(input, "type", TYPES),
    mode: oneOf(input, "mode", MODES),
    status: oneOf(input, "status", STATUSES),
    receiverType: oneOf(input, "receiverType", RECEIVER_TYPES),
    hasRecording: hasRecording === undefined ? undefined : hasRecording === "true",
    uid,
    person: person === "" ? undefined : person,
    participantsCount: integer(input, "participantsCount", 0, 100_000, "a whole number"),
    weekday: integer(input, "weekday", 0, 6, "a weekday number (0 = Sunday … 6 = Saturday)"),
    hour: integer(input, "hour", 0, 23, "an hour of the day (0 … 23)"),
    from,
    to,
    tz,
    compare: oneOf(input, "compare", COMPARE_MODES),
    page: integer(input, "page", 1, 1_000_000_000, "a page number (1, 2, …)") ?? 1,
    perPage: integer(input, "perPage", 1, MAX_PER_PAGE, `a whole number from 1 to ${MAX_PER_PAGE}`) ?? DEFAULT_PER_PAGE,
    sort: oneOf(input, "sort", SORT_KEYS) ?? "start",
    order: oneOf(input, "order", ["asc", "desc"] as const) ?? "desc",
    format: oneOf(input, "format", ["json", "csv"] as const) ?? "json",
  };
}
