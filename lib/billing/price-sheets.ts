/**
 * Price sheets: per tenant app or the account default, each in force from a month until
 * the next sheet of the same scope. Set (insert or replace the sheet of that scope and
 * month), remove, list, and the sheet in force for an app and month. Every change is
 * audited in the same transaction.
 */
import { and, asc, eq, gte, isNull, lte, desc, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { apps, priceSheets, statements, type PriceSheetRow } from "@/db/schema";
import { auditSync, type AuditActor } from "@/lib/auth/audit";
import { HttpError, notFound } from "@/lib/http/errors";
import { Dec, fixed, isCurrency, minorUnits, parseDecimal } from "./money";
import { isMonth } from "./month";
import type { Prices, PriceTerms } from "./pricing";

/** Places a unit price may have (0.000125 per minute is a real price). */
export const UNIT_PRICE_PLACES = 6;
export const MINUTES_PLACES = 3;

export interface PriceSheetInput {
  /** A tenant app id, or null for the account default. */
  app: string | null;
  effectiveMonth: string;
  currency: string;
  audioPerMinute: string;
  videoPerMinute: string;
  perRecording: string;
  includedMinutes?: string;
  monthlyMinimum?: string;
}

export interface PriceSheet extends Prices {
  id: number;
  /** App id, or null: the account default. */
  app: string | null;
  appName: string | null;
  effectiveMonth: string;
  updatedMs: number;
  updatedBy: string;
}

const invalid = (parameter: string, message: string) => new HttpError(400, "invalid_parameter", `${parameter}: ${message}`, { parameter });
const conflict = (message: string) => new HttpError(409, "conflict", message);

function decimalField(name: string, value: string | undefined, places: number, what: string): string {
  if (value === undefined || value.trim() === "") return "0";
  const d = parseDecimal(value, places);
  if (d === null) throw invalid(name, `"${value}" is not ${what} (digits, a dot, at most ${places} decimal place${places === 1 ? "" : "s"})`);
  return d.toFixed();
}

/** Validates and normalises what a person typed (form, CLI, API): 400 naming the field. */
export function validatePriceSheet(input: PriceSheetInput): Omit<PriceSheetInput, "includedMinutes" | "monthlyMinimum"> & { includedMinutes: string; monthlyMinimum: string } {
  const effectiveMonth = input.effectiveMonth.trim();
  if (!isMonth(effectiveMonth)) throw invalid("effectiveMonth", `"${input.effectiveMonth}" is not a month (YYYY-MM)`);
  const currency = input.currency.trim().toUpperCase();
  if (!/^[A-Z]{3}$/.test(currency) || !isCurrency(currency)) throw invalid("currency", `"${input.currency}" is not an ISO 4217 currency code (e.g. USD, EUR, INR)`);
  const required = (name: keyof PriceSheetInput, value: string) => {
    if (value.trim() === "") throw invalid(name, "is required (0 is a price too)");
    return decimalField(name, value, UNIT_PRICE_PLACES, "a price");
  };
  return {
    app: input.app,
    effectiveMonth,
    currency,
    audioPerMinute: required("audioPerMinute", input.audioPerMinute),
    videoPerMinute: required("videoPerMinute", input.videoPerMinute),
    perRecording: required("perRecording", input.perRecording),
    includedMinutes: decimalField("includedMinutes", input.includedMinutes, MINUTES_PLACES, "a number of minutes"),
    monthlyMinimum: fixed(new Dec(decimalField("monthlyMinimum", input.monthlyMinimum, minorUnits(currency), `an amount in ${currency}`)), minorUnits(currency)),
  };
}

function appPkOf(db: Db, appId: string | null): number | null {
  if (appId === null) return null;
  const row = db.select({ pk: apps.pk }).from(apps).where(eq(apps.appId, appId)).get();
  if (!row) throw notFound(`app "${appId}" not found`);
  return row.pk;
}

const scopeCondition = (appPk: number | null) => (appPk === null ? isNull(priceSheets.appPk) : eq(priceSheets.appPk, appPk));

/**
 * A sheet may only take effect after the last issued month of the apps it covers (the
 * default covers every app): an issued statement's prices are history.
 */
function assertNotIssued(db: Db, appId: string | null, fromMonth: string, verb: string): void {
  const issued = db
    .select({ appId: statements.appId, month: statements.month })
    .from(statements)
    .where(and(gte(statements.month, fromMonth), appId === null ? undefined : eq(statements.appId, appId)))
    .orderBy(desc(statements.month))
    .get();
  if (issued) {
    throw conflict(
      `cannot ${verb} a price sheet from ${fromMonth}: the statement of ${issued.month} is issued for ${issued.appId}; a change can take effect from the month after the last issued one`,
    );
  }
}

export function setPriceSheet(db: Db, actor: AuditActor, input: PriceSheetInput): PriceSheet {
  const v = validatePriceSheet(input);
  return db.transaction(() => {
    const appPk = appPkOf(db, v.app);
    assertNotIssued(db, v.app, v.effectiveMonth, "set");
    const values = {
      appPk, effectiveMonth: v.effectiveMonth, currency: v.currency, audioPerMinute: v.audioPerMinute, videoPerMinute: v.videoPerMinute,
      perRecording: v.perRecording, includedMinutes: v.includedMinutes, monthlyMinimum: v.monthlyMinimum, updatedMs: Date.now(), updatedBy: actor.email,
    };
    const existing = db.select({ pk: priceSheets.pk }).from(priceSheets).where(and(scopeCondition(appPk), eq(priceSheets.effectiveMonth, v.effectiveMonth))).get();
    if (existing) db.update(priceSheets).set(values).where(eq(priceSheets.pk, existing.pk)).run();
    else db.insert(priceSheets).values(values).run();
    const { updatedMs: _ms, updatedBy: _by, appPk: _pk, ...details } = values;
    auditSync(db, actor, "price.set", v.app ?? "default", { ...details, replaced: existing !== undefined });
    return listPriceSheets(db).find((s) => s.app === v.app && s.effectiveMonth === v.effectiveMonth)!;
  });
}

export function removePriceSheet(db: Db, actor: AuditActor, target: { app: string | null; effectiveMonth: string }): void {
  if (!isMonth(target.effectiveMonth)) throw invalid("effectiveMonth", `"${target.effectiveMonth}" is not a month (YYYY-MM)`);
  db.transaction(() => {
    const appPk = appPkOf(db, target.app);
    const row = db.select({ pk: priceSheets.pk }).from(priceSheets).where(and(scopeCondition(appPk), eq(priceSheets.effectiveMonth, target.effectiveMonth))).get();
    if (!row) throw notFound(`no price sheet of ${target.app ?? "the account default"} from ${target.effectiveMonth}`);
    assertNotIssued(db, target.app, target.effectiveMonth, "remove");
    db.delete(priceSheets).where(eq(priceSheets.pk, row.pk)).run();
    auditSync(db, actor, "price.remove", target.app ?? "default", { effectiveMonth: target.effectiveMonth });
  });
}

function toSheet(r: PriceSheetRow, app: { appId: string; name: string } | undefined): PriceSheet {
  return {
    id: r.pk, app: app?.appId ?? null, appName: app?.name ?? null, effectiveMonth: r.effectiveMonth, currency: r.currency,
    audioPerMinute: r.audioPerMinute, videoPerMinute: r.videoPerMinute, perRecording: r.perRecording, includedMinutes: r.includedMinutes,
    monthlyMinimum: r.monthlyMinimum, updatedMs: r.updatedMs, updatedBy: r.updatedBy,
  };
}

/** Every sheet (or one app's and the default's): the default first, then by app id; each scope by month. */
export function listPriceSheets(db: Db, options: { app?: string } = {}): PriceSheet[] {
  const appPk = options.app === undefined ? undefined : appPkOf(db, options.app);
  const rows = db
    .select({ sheet: priceSheets, appId: apps.appId, name: apps.name })
    .from(priceSheets)
    .leftJoin(apps, eq(apps.pk, priceSheets.appPk))
    .where(appPk === undefined ? undefined : sql`(${priceSheets.appPk} IS NULL OR ${priceSheets.appPk} = ${appPk})`)
    .orderBy(sql`${apps.appId} IS NOT NULL`, asc(apps.appId), asc(priceSheets.effectiveMonth))
    .all();
  return rows.map((r) => toSheet(r.sheet, r.appId === null ? undefined : { appId: r.appId, name: r.name! }));
}

/** The terms in force for an app in a month: its own latest sheet from that month or before, else the default's; null if none. */
export function termsInForce(db: Db, appPk: number, month: string): PriceTerms | null {
  const latest = (scope: number | null) =>
    db.select().from(priceSheets).where(and(scopeCondition(scope), lte(priceSheets.effectiveMonth, month))).orderBy(desc(priceSheets.effectiveMonth)).get();
  const own = latest(appPk);
  const row = own ?? latest(null);
  if (!row) return null;
  return {
    sheetId: row.pk, scope: own ? "app" : "default", effectiveMonth: row.effectiveMonth, currency: row.currency, audioPerMinute: row.audioPerMinute,
    videoPerMinute: row.videoPerMinute, perRecording: row.perRecording, includedMinutes: row.includedMinutes, monthlyMinimum: row.monthlyMinimum,
  };
}
