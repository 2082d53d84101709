/**
 * The statements page's URL: month, apps, zone, participant detail. One definition for
 * the server page (to prefetch) and the client (nuqs), and the API query both send.
 * Client-safe.
 */
import { createLoader, createParser, parseAsBoolean, parseAsNativeArrayOf, parseAsString, type inferParserType } from "nuqs/server";
import { isValidTimeZone } from "@/lib/time/tz";
import { isMonth } from "@/lib/billing/month";

const parseAsMonth = createParser({ parse: (v: string) => (isMonth(v) ? v : null), serialize: (v: string) => v });
const parseAsTimeZone = createParser({ parse: (v: string) => (isValidTimeZone(v) ? v : null), serialize: (v: string) => v });

export const statementParsers = {
  /** Absent: the last whole month (the page's default, computed on the server). */
  month: parseAsMonth,
  app: parseAsNativeArrayOf(parseAsString),
  tz: parseAsTimeZone.withDefault("UTC"),
  detail: parseAsBoolean.withDefault(false),
};

export type StatementValues = inferParserType<typeof statementParsers>;

export const loadStatementParams = createLoader(statementParsers);

/** The API query of these values, in one canonical order (also the react-query key). */
export function statementsQuery(v: StatementValues, defaultMonth: string): URLSearchParams {
  const q = new URLSearchParams({ month: v.month ?? defaultMonth });
  if (v.tz !== "UTC") q.set("tz", v.tz);
  for (const a of [...new Set(v.app)].sort()) q.append("app", a);
  if (v.detail) q.set("detail", "participants");
  return q;
}

export const statementsKey = (query: URLSearchParams) => ["statements", query.toString()] as const;
