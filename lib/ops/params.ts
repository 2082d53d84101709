import { z } from "zod";
import { MAX_APPS_PER_QUERY } from "@/lib/analytics/report-registry";
import { isValidTimeZone } from "@/lib/time/tz";

/**
 * Search parameters of the operations pages (live, events, sync), parsed the same way
 * on the server page and in its route handler. `app` is repeatable, like the analytics filters.
 */
export type RawParams = Record<string, string | string[] | undefined>;

export function rawFromUrl(search: URLSearchParams): RawParams {
  const out: RawParams = {};
  for (const key of new Set(search.keys())) {
    const all = search.getAll(key);
    out[key] = all.length === 1 ? all[0] : all;
  }
  return out;
}

const first = (v: unknown) => (Array.isArray(v) ? v[0] : v);
const blankToUndefined = (v: unknown) => {
  const f = first(v);
  return typeof f === "string" && f.trim() === "" ? undefined : f;
};

export const appsParam = z.preprocess(
  (v) => (v === undefined ? [] : (Array.isArray(v) ? v : [v]).filter((s) => typeof s !== "string" || s.trim() !== "")),
  z.array(z.string().trim().max(63, "app ids are at most 63 characters")).max(MAX_APPS_PER_QUERY, `at most ${MAX_APPS_PER_QUERY} apps`),
);

export const intParam = (min: number, max: number, fallback: number) =>
  z.preprocess(blankToUndefined, z.coerce.number().int(`must be a whole number`).min(min).max(max).default(fallback));

export const optionalIntParam = (min: number, max: number) =>
  z.preprocess(blankToUndefined, z.coerce.number().int(`must be a whole number`).min(min).max(max).optional());

export const tzParam = z.preprocess(
  blankToUndefined,
  z.string().max(64).refine(isValidTimeZone, "unknown time zone").default("UTC"),
);

export const enumParam = <const T extends readonly [string, ...string[]]>(values: T, fallback: T[number]) =>
  z.preprocess(blankToUndefined, z.enum(values).default(fallback as never));

export const formatParam = z.preprocess(blankToUndefined, z.enum(["json", "csv"]).default("json"));

/** The query string of parsed params (repeatable `app`), leaving out defaults given as `skip`. */
export function toQuery(params: Record<string, string | number | readonly string[] | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === "") continue;
    if (Array.isArray(v)) for (const x of v) q.append(k, String(x));
    else q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : "";
}
