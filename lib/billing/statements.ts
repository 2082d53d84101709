/**
 * Statements per tenant app for a calendar month in a time zone: a draft priced now from
 * the engine's numbers and the price sheet in force, or the issued (frozen) statement
 * with its pending adjustment. A draft carries the pending adjustments of the app's
 * earlier issued months (same currency) as lines; issuing stores exactly that (issue.ts).
 */
import type { Db } from "@/db/client";
import { listApps } from "@/lib/apps/registry";
import type { Scope } from "@/lib/analytics";
import { isValidTimeZone } from "@/lib/time/tz";
import { HttpError, notFound } from "@/lib/http/errors";
import { ROUNDING_RULE, sumMoney } from "./money";
import { isMonth, isMonthOver, monthRange, type MonthRange } from "./month";
import { carriedBy, isPending, issuedBefore, issuedForMonth, pendingAdjustments, type IssuedStatement, type PendingAdjustment } from "./issued";
import { priceUsage, type PriceTerms, type StatementLine, type Usage } from "./pricing";
import { termsInForce } from "./price-sheets";
import { monthUsage, NO_USAGE, participantUsage, type ParticipantUsage } from "./usage";

export interface StatementQuery {
  month: string;
  tz: string;
  /** App ids; empty: every app the caller may see. */
  apps: string[];
  /** Include the per-participant detail. */
  detail: boolean;
}

export interface Statement {
  app: string;
  name: string;
  month: string;
  /** The zone the month is counted in (an issued statement keeps its own). */
  timeZone: string;
  from: number;
  to: number;
  /** `unpriced`: no price sheet in force for the month (usage only). */
  status: "draft" | "issued" | "unpriced";
  /** The month has ended in its zone (only then can it be issued). */
  monthOver: boolean;
  currency: string | null;
  terms: PriceTerms | null;
  usage: Usage;
  lines: StatementLine[];
  usageAmount: string | null;
  minimumTopUp: string | null;
  adjustmentsAmount: string | null;
  total: string | null;
  issued: { number: string; issuedAt: string; issuedBy: string } | null;
  /** Issued statements: what changed since issue and is not carried yet (null: nothing changed). */
  pendingAdjustment: PendingAdjustment | null;
  /** Issued statements: later statements that carried its adjustments. */
  carriedBy: Array<{ number: string; month: string; amount: string }>;
  /** Drafts: earlier pending adjustments left out (another currency). */
  notCarried: PendingAdjustment[];
  participants?: ParticipantUsage[];
}

interface AppRef {
  pk: number;
  appId: string;
  name: string;
}

/** The apps of a query: the named ones (404 for one the caller may not see, as if absent) or all visible. */
export async function statementApps(db: Db, appIds: readonly string[], scope: Scope): Promise<AppRef[]> {
  const visible = (await listApps(db)).filter((a) => scope.appPks === "all" || scope.appPks.includes(a.pk));
  if (appIds.length === 0) return visible.map(({ pk, appId, name }) => ({ pk, appId, name }));
  return [...new Set(appIds)].map((id) => {
    const app = visible.find((a) => a.appId === id);
    if (!app) throw notFound(`app "${id}" not found`);
    return { pk: app.pk, appId: app.appId, name: app.name };
  });
}

/** A draft: the month's usage priced with the terms in force, plus carried adjustments of earlier months. */
export function draftStatement(app: AppRef, range: MonthRange, usage: Usage, terms: PriceTerms | null, carriable: PendingAdjustment[], now: number): Statement {
  const base = {
    app: app.appId, name: app.name, month: range.month, timeZone: range.tz, from: range.from, to: range.to, monthOver: isMonthOver(range.month, range.tz, now),
    usage, issued: null, pendingAdjustment: null, carriedBy: [],
  };
  if (!terms) {
    return { ...base, status: "unpriced", currency: null, terms: null, lines: [], usageAmount: null, minimumTopUp: null, adjustmentsAmount: null, total: null, notCarried: carriable };
  }
  const priced = priceUsage(usage, terms);
  const carried = carriable.filter((p) => p.currency === terms.currency);
  const adjustmentLines: StatementLine[] = carried.map((p) => ({
    kind: "adjustment", label: `Adjustment to ${p.number} (${p.month}): usage changed after issue`, quantity: "", included: "", billable: "", unitPrice: "", amount: p.amount,
    adjusts: { number: p.number, month: p.month, usage: p.currentUsage },
  }));
  const adjustmentsAmount = sumMoney(adjustmentLines.map((l) => l.amount), terms.currency);
  return {
    ...base, status: "draft", currency: terms.currency, terms, lines: [...priced.lines, ...adjustmentLines], usageAmount: priced.usageAmount,
    minimumTopUp: priced.minimumTopUp, adjustmentsAmount, total: sumMoney([priced.total, adjustmentsAmount], terms.currency),
    notCarried: carriable.filter((p) => p.currency !== terms.currency),
  };
}

function issuedStatement(s: IssuedStatement, pending: PendingAdjustment | undefined, carried: Statement["carriedBy"], now: number): Statement {
  const b = s.body;
  const changed = pending && isPending(pending);
  return {
    app: s.appId, name: s.appName, month: s.month, timeZone: s.timeZone, from: b.from, to: b.to, status: "issued", monthOver: isMonthOver(s.month, s.timeZone, now),
    currency: s.currency, terms: b.terms, usage: b.usage, lines: b.lines, usageAmount: b.usageAmount, minimumTopUp: b.minimumTopUp,
    adjustmentsAmount: b.adjustmentsAmount, total: b.total, issued: { number: s.number, issuedAt: s.issuedAt, issuedBy: s.issuedBy },
    pendingAdjustment: changed ? pending : null, carriedBy: carried, notCarried: [],
  };
}

/** Pending adjustments of each app's issued months before `month`. */
async function carriableByApp(db: Db, appIds: string[], month: string, scope: Scope): Promise<Map<string, PendingAdjustment[]>> {
  const earlier = await issuedBefore(db, appIds, month);
  const pending = await pendingAdjustments(db, earlier, scope);
  const out = new Map<string, PendingAdjustment[]>();
  for (const s of earlier) {
    const p = pending.get(s.pk);
    if (!p || !isPending(p)) continue;
    out.set(s.appId, [...(out.get(s.appId) ?? []), p]);
  }
  return out;
}

/** The JSON answer of `GET /api/v1/statements` (and what the page renders). */
export interface StatementsJson {
  month: string;
  tz: string;
  from: number;
  to: number;
  rounding: string;
  data: Statement[];
}

export async function statementsJson(db: Db, q: StatementQuery, scope: Scope, now?: number): Promise<StatementsJson> {
  const { range, statements } = await buildStatements(db, q, scope, now);
  return { month: q.month, tz: q.tz, from: range.from, to: range.to, rounding: ROUNDING_RULE, data: statements };
}

/** Every statement of the query, one per app (issued or draft), in app id order. */
export async function buildStatements(db: Db, q: StatementQuery, scope: Scope, now = Math.floor(Date.now() / 1000)): Promise<{ range: MonthRange; statements: Statement[] }> {
  // Routes validate first; library callers (actions, scripts) get the same 400.
  if (!isMonth(q.month)) throw new HttpError(400, "invalid_parameter", `month: "${q.month}" is not a month (YYYY-MM)`, { parameter: "month" });
  if (!isValidTimeZone(q.tz)) throw new HttpError(400, "invalid_parameter", `tz: "${q.tz}" is not an IANA time zone`, { parameter: "tz" });
  const range = monthRange(q.month, q.tz);
  const apps = await statementApps(db, q.apps, scope);
  const ids = apps.map((a) => a.appId);
  const issued = await issuedForMonth(db, ids, q.month);
  const drafts = apps.filter((a) => !issued.has(a.appId));
  const usage = await monthUsage(range, drafts.map((a) => a.appId), scope);
  const pending = await pendingAdjustments(db, [...issued.values()], scope);
  const carriable = await carriableByApp(db, drafts.map((a) => a.appId), q.month, scope);
  const out: Statement[] = [];
  for (const app of apps) {
    const s = issued.get(app.appId);
    const statement = s
      ? issuedStatement(s, pending.get(s.pk), await carriedBy(db, s.pk), now)
      : draftStatement(app, range, usage.get(app.appId) ?? NO_USAGE, await termsInForce(db, app.pk, q.month), carriable.get(app.appId) ?? [], now);
    if (q.detail) statement.participants = s ? s.body.participants : await participantUsage(range, app.appId, scope);
    out.push(statement);
  }
  return { range, statements: out };
}
