/**
 * Issued statements as stored (frozen), and what has changed since: the pending
 * adjustment of an issued month is its usage as the engine reads it now, priced with the
 * terms it was issued with, less what was issued, less what later statements carried.
 */
import { and, eq, inArray, lt, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import type { StatementRow } from "@/db/schema";
import { tablesOf } from "@/db/state";
import type { Scope } from "@/lib/analytics";
import { Dec, fixed, minorUnits, sumMoney } from "./money";
import { monthRange } from "./month";
import { priceUsage, sameUsage, usageDelta, type PriceTerms, type StatementLine, type Usage } from "./pricing";
import { monthUsage, NO_USAGE, type ParticipantUsage } from "./usage";

/** What an issued statement stores, exactly as it was shown when issued. */
export interface IssuedBody {
  from: number;
  to: number;
  usage: Usage;
  terms: PriceTerms;
  lines: StatementLine[];
  usageAmount: string;
  minimumTopUp: string;
  adjustmentsAmount: string;
  total: string;
  participants: ParticipantUsage[];
}

export interface IssuedStatement {
  pk: number;
  number: string;
  appId: string;
  appName: string;
  month: string;
  timeZone: string;
  currency: string;
  total: string;
  issuedAt: string;
  issuedBy: string;
  body: IssuedBody;
}

export const statementNumber = (n: number): string => `ST-${String(n).padStart(6, "0")}`;

export function toIssued(r: StatementRow): IssuedStatement {
  return {
    pk: r.pk, number: statementNumber(r.number), appId: r.appId, appName: r.appName, month: r.month, timeZone: r.timeZone,
    currency: r.currency, total: r.total, issuedAt: new Date(r.issuedMs).toISOString(), issuedBy: r.issuedBy, body: r.body as unknown as IssuedBody,
  };
}

/** The issued statements of these apps for one month. */
export async function issuedForMonth(db: Db, appIds: readonly string[], month: string): Promise<Map<string, IssuedStatement>> {
  if (appIds.length === 0) return new Map();
  const { statements } = tablesOf(db);
  const rows = await db.select().from(statements).where(and(eq(statements.month, month), inArray(statements.appId, [...appIds])));
  return new Map(rows.map((r) => [r.appId, toIssued(r)]));
}

/** Issued statements of these apps for months before `month` (the ones a new statement may carry adjustments of). */
export async function issuedBefore(db: Db, appIds: readonly string[], month: string): Promise<IssuedStatement[]> {
  if (appIds.length === 0) return [];
  const { statements } = tablesOf(db);
  const rows = await db.select().from(statements).where(and(lt(statements.month, month), inArray(statements.appId, [...appIds]))).orderBy(statements.month, statements.pk);
  return rows.map(toIssued);
}

/** What later statements carried of each issued statement so far: the amount, and the usage the last one accounted for. */
export async function carriedSoFar(db: Db, pks: readonly number[]): Promise<Map<number, { amount: string; usage: Usage | null }>> {
  const out = new Map<number, { amount: string; usage: Usage | null }>();
  if (pks.length === 0) return out;
  const { statementAdjustments } = tablesOf(db);
  const rows = await db
    .select({ adjustsPk: statementAdjustments.adjustsPk, amount: statementAdjustments.amount, details: statementAdjustments.details })
    .from(statementAdjustments)
    .where(inArray(statementAdjustments.adjustsPk, [...pks]))
    .orderBy(statementAdjustments.pk);
  for (const r of rows) {
    const before = out.get(r.adjustsPk);
    const usage = (r.details?.usage as Usage | undefined) ?? before?.usage ?? null;
    out.set(r.adjustsPk, { amount: new Dec(before?.amount ?? 0).plus(r.amount).toFixed(), usage });
  }
  return out;
}

/** The statements (number, month) that carried adjustments of an issued statement. */
export async function carriedBy(db: Db, pk: number): Promise<Array<{ number: string; month: string; amount: string }>> {
  const { statementAdjustments, statements } = tablesOf(db);
  const rows = await db
    .select({ number: statements.number, month: statements.month, amount: statementAdjustments.amount })
    .from(statementAdjustments)
    .innerJoin(statements, eq(statements.pk, statementAdjustments.statementPk))
    .where(eq(statementAdjustments.adjustsPk, pk))
    .orderBy(sql`${statements.number}`);
  return rows.map((r) => ({ number: statementNumber(r.number), month: r.month, amount: r.amount }));
}

export interface PendingAdjustment {
  /** The issued statement this corrects. */
  number: string;
  month: string;
  timeZone: string;
  currency: string;
  /** Usage as issued, as last carried (or issued), as the engine reads it now, and the change since last accounted. */
  issuedUsage: Usage;
  accountedUsage: Usage;
  currentUsage: Usage;
  delta: Usage;
  /** The month's usage priced now with the issued terms (without carried lines). */
  repricedTotal: string;
  /** What was issued for the month's usage (usage lines and the minimum). */
  issuedAmount: string;
  /** Already carried by later statements. */
  carried: string;
  /** repricedTotal − issuedAmount − carried: what a next statement can carry. */
  amount: string;
  /** The usage changed since it was last accounted for (even when the amount did not). */
  usageChanged: boolean;
}

/** Something to carry: money, or a usage change worth a 0.00 line on the next statement. */
export const isPending = (p: PendingAdjustment): boolean => p.usageChanged || !new Dec(p.amount).isZero();

/** The pending adjustment of each issued statement (by pk), from the engine's current numbers. */
export async function pendingAdjustments(db: Db, issued: readonly IssuedStatement[], scope: Scope): Promise<Map<number, PendingAdjustment>> {
  // One engine read per (month, zone) the statements were issued in.
  const groups = new Map<string, { month: string; tz: string; apps: Set<string> }>();
  for (const s of issued) {
    const key = `${s.month}|${s.timeZone}`;
    const g = groups.get(key) ?? { month: s.month, tz: s.timeZone, apps: new Set<string>() };
    g.apps.add(s.appId);
    groups.set(key, g);
  }
  const usageNow = new Map<string, Usage>();
  for (const [key, g] of groups) {
    const usage = await monthUsage(monthRange(g.month, g.tz), [...g.apps], scope);
    for (const app of g.apps) usageNow.set(`${key}|${app}`, usage.get(app) ?? NO_USAGE);
  }
  const carried = await carriedSoFar(db, issued.map((s) => s.pk));
  const out = new Map<number, PendingAdjustment>();
  for (const s of issued) {
    const current = usageNow.get(`${s.month}|${s.timeZone}|${s.appId}`) ?? NO_USAGE;
    const places = minorUnits(s.currency);
    const repriced = priceUsage(current, s.body.terms).total;
    const issuedAmount = sumMoney([s.body.usageAmount, s.body.minimumTopUp], s.currency);
    const before = carried.get(s.pk);
    const carriedAmount = fixed(new Dec(before?.amount ?? 0), places);
    const accounted = before?.usage ?? s.body.usage;
    out.set(s.pk, {
      number: s.number, month: s.month, timeZone: s.timeZone, currency: s.currency, issuedUsage: s.body.usage, accountedUsage: accounted, currentUsage: current,
      delta: usageDelta(current, accounted), repricedTotal: repriced, issuedAmount, carried: carriedAmount,
      amount: fixed(new Dec(repriced).minus(issuedAmount).minus(carriedAmount), places), usageChanged: !sameUsage(current, accounted),
    });
  }
  return out;
}
