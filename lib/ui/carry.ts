/**
 * The filter set that follows a person from page to page: the filter names of the URL
 * (apps, call fields, period, zone; docs/api.md), never paging or a page's own choices.
 * Client-safe and pure.
 */
import { FILTER_KEYS } from "./filter-params";

const CARRIED = new Set<string>(FILTER_KEYS);
/** Paging and sorting of the calls list, kept on the way back from a call to its list. */
const LIST_STATE = new Set<string>([...FILTER_KEYS, "page", "sort", "order"]);

/** The filters of a page's query, in their order. */
export function carriedFilters(search: URLSearchParams, keep: ReadonlySet<string> = CARRIED): URLSearchParams {
  const out = new URLSearchParams();
  for (const [k, v] of search) if (keep.has(k)) out.append(k, v);
  return out;
}

/** `path` with the carried filters as its query. */
export function withFilters(path: string, filters: URLSearchParams): string {
  const qs = filters.toString();
  return qs ? `${path}?${qs}` : path;
}

/**
 * The calls list a call's page goes back to: the list's filters, page and sort as the
 * call page's `back` parameter carried them (anything else in it is dropped), else the
 * call's app in the call page's zone.
 */
export function callsListHref(back: string | undefined, app: string, tz: string): string {
  if (back !== undefined) {
    const list = carriedFilters(new URLSearchParams(back), LIST_STATE);
    if ([...list.keys()].length > 0) return withFilters("/calls", list);
  }
  const q = new URLSearchParams({ app });
  if (tz !== "UTC") q.set("tz", tz);
  return withFilters("/calls", q);
}
