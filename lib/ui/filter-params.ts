/**
 * The dashboard's filters as nuqs parsers: one definition read by the server pages
 * (`loadFilters`, to prefetch) and by the client (`useQueryStates`, to filter), so both
 * compute the same API query and the same react-query key. Query names are the API's
 * (docs/api.md): a page URL's query is a valid analytics query.
 *
 * Client-safe: imports only pure modules (never `@/lib/analytics`'s index, which
 * pulls in the warehouse).
 */
import { createLoader, createParser, parseAsInteger, parseAsNativeArrayOf, parseAsString, parseAsStringLiteral, type inferParserType } from "nuqs/server";
import { MODES, RECEIVER_TYPES, STATUSES, TYPES } from "@/lib/analytics/dims";
import { SORT_KEYS, type SortKey } from "@/lib/analytics/report-registry";
import { isValidTimeZone } from "@/lib/time/tz";

export type { SortKey };

/** An IANA zone; anything else reads as absent (so UTC). */
const parseAsTimeZone = createParser({
  parse: (v: string) => (isValidTimeZone(v) ? v : null),
  serialize: (v: string) => v,
});

/** Epoch seconds within the API's bounds. */
const parseAsEpoch = createParser({
  parse: (v: string) => (/^\d{1,12}$/.test(v) ? Number(v) : null),
  serialize: (v: number) => String(v),
});

const parseAsCount = createParser({
  parse: (v: string) => (/^\d{1,6}$/.test(v) ? Number(v) : null),
  serialize: (v: number) => String(v),
});

/** A whole number in [0, max] (the heatmap drill-down's weekday and hour); anything else reads as absent. */
const parseAsIndex = (max: number) =>
  createParser({
    parse: (v: string) => (/^\d{1,2}$/.test(v) && Number(v) <= max ? Number(v) : null),
    serialize: (v: number) => String(v),
  });

export const filterParsers = {
  app: parseAsNativeArrayOf(parseAsString),
  type: parseAsStringLiteral(TYPES),
  mode: parseAsStringLiteral(MODES),
  status: parseAsStringLiteral(STATUSES),
  receiverType: parseAsStringLiteral(RECEIVER_TYPES),
  hasRecording: parseAsStringLiteral(["true", "false"] as const),
  uid: parseAsString,
  participantsCount: parseAsCount,
  // Beyond the contract: the heatmap's drill-down (calls running in that local weekday / hour; lib/analytics/running-hours.ts).
  weekday: parseAsIndex(6),
  hour: parseAsIndex(23),
  from: parseAsEpoch,
  to: parseAsEpoch,
  // Kept in the URL even when UTC: a page without one starts in the person's zone
  // (components/filter-bar.tsx), so an explicit UTC must stay explicit.
  tz: parseAsTimeZone.withDefault("UTC").withOptions({ clearOnDefault: false }),
};

/** Paging and sorting of the paged tables (calls, participants, recordings). */
export const pageParsers = {
  page: parseAsInteger.withDefault(1),
  sort: parseAsStringLiteral(SORT_KEYS).withDefault("start"),
  order: parseAsStringLiteral(["asc", "desc"] as const).withDefault("desc"),
};

export const allParsers = { ...filterParsers, ...pageParsers };

export type FilterValues = inferParserType<typeof filterParsers>;
export type PageValues = inferParserType<typeof pageParsers>;
export type AllValues = inferParserType<typeof allParsers>;

/** Server pages: `await loadFilters(searchParams)` with the same parsers. */
export const loadFilters = createLoader(allParsers);

/** Keys the filter bar sets; changing any of them returns to page 1. */
export const FILTER_KEYS = Object.keys(filterParsers) as Array<keyof FilterValues>;

/**
 * The analytics API query of these values, in one canonical order (so it doubles as
 * the react-query key). With `perPage`, the paged tables' page/perPage/sort/order too.
 */
export function apiQuery(v: FilterValues & Partial<PageValues>, options: { perPage?: number; extra?: Record<string, string> } = {}): URLSearchParams {
  const p = new URLSearchParams();
  for (const a of [...new Set(v.app)].sort()) p.append("app", a);
  const put = (k: string, value: string | number | null | undefined) => {
    if (value !== null && value !== undefined && value !== "") p.set(k, String(value));
  };
  put("type", v.type);
  put("mode", v.mode);
  put("status", v.status);
  put("receiverType", v.receiverType);
  put("hasRecording", v.hasRecording);
  put("uid", v.uid);
  put("participantsCount", v.participantsCount);
  put("weekday", v.weekday);
  put("hour", v.hour);
  put("from", v.from);
  put("to", v.to !== null && v.from !== null && v.to < v.from ? null : v.to);
  if (v.tz && v.tz !== "UTC") put("tz", v.tz);
  if (options.perPage !== undefined) {
    put("page", Math.max(1, v.page ?? 1));
    put("perPage", options.perPage);
    if (v.sort !== undefined && v.sort !== "start") put("sort", v.sort);
    if (v.order !== undefined && v.order !== "desc") put("order", v.order);
  }
  for (const [k, value] of Object.entries(options.extra ?? {})) put(k, value);
  return p;
}

/** True when any filter (not paging) differs from its default (`startZone`: the zone a page starts in). */
export function hasActiveFilters(v: FilterValues, startZone = "UTC"): boolean {
  return (
    v.app.length > 0 || v.type !== null || v.mode !== null || v.status !== null || v.receiverType !== null || v.hasRecording !== null ||
    v.uid !== null || v.participantsCount !== null || v.weekday !== null || v.hour !== null || v.from !== null || v.to !== null || v.tz !== startZone
  );
}

/**
 * The query of a link to another report page with these filters: the API query with the
 * zone always named (a page whose URL names none starts in the person's default zone, so
 * an explicit UTC must not be left out).
 */
export function pageQuery(v: FilterValues): URLSearchParams {
  const p = apiQuery(v);
  p.set("tz", v.tz);
  return p;
}
