/**
 * Money: exact decimal arithmetic (decimal.js), never a binary float. Amounts travel as
 * decimal strings ("12.30", "-0.05"): in the database, in JSON, in the CSV.
 *
 * THE rounding rule (docs/decisions/0012-usage-statements.md, stated on the page and in
 * the CSV): a line's amount is its billable quantity × unit price, computed exactly, then
 * rounded ONCE to the currency's minor unit, half away from zero. Subtotals, the monthly
 * minimum's top-up, adjustments and totals add already-rounded amounts, so the printed
 * lines always add up to the printed total.
 */
import Decimal from "decimal.js";

/** A private decimal.js: enough digits that no product or sum of ours is ever rounded. */
export const Dec = Decimal.clone({ precision: 60, rounding: Decimal.ROUND_HALF_UP, toExpNeg: -30, toExpPos: 40 });
export type Dec = Decimal;

export const ROUNDING_RULE =
  "Each line is quantity × unit price computed exactly, rounded once to the currency's minor unit (half away from zero); totals add the rounded lines.";

/** Decimal places of a currency's minor unit (USD 2, JPY 0, BHD 3), from the runtime's ISO 4217 data. */
export function minorUnits(currency: string): number {
  return new Intl.NumberFormat("en", { style: "currency", currency }).resolvedOptions().maximumFractionDigits ?? 2;
}

/** ISO 4217 codes the runtime knows. */
let known: Set<string> | undefined;
export function isCurrency(code: string): boolean {
  known ??= new Set(Intl.supportedValuesOf("currency"));
  return known.has(code);
}

/** Rounds an exact amount to the currency's minor unit, half away from zero, as a fixed string ("4.10"). */
export function roundMoney(amount: Dec, currency: string): string {
  return fixed(amount.toDecimalPlaces(minorUnits(currency), Decimal.ROUND_HALF_UP), minorUnits(currency));
}

/** Fixed-point text of an already-rounded amount ("-0.00" never appears). */
export function fixed(amount: Dec, places: number): string {
  const s = amount.toFixed(places);
  return /^-0(\.0*)?$/.test(s) ? s.slice(1) : s;
}

/** Sums money strings of one currency (each already rounded) into a fixed string. */
export function sumMoney(amounts: readonly string[], currency: string): string {
  return fixed(amounts.reduce((s, a) => s.plus(a), new Dec(0)), minorUnits(currency));
}

/**
 * A JS number the analytics engine gives (minutes rounded to the thousandth) as an
 * exact decimal: the double nearest to k/1000 prints back as k/1000 at 3 places.
 */
export function fromThousandths(x: number): Dec {
  return new Dec(x.toFixed(3));
}

/** Minutes as text with exactly 3 places ("12.500"). */
export const minutesText = (d: Dec): string => fixed(d, 3);

/** A non-negative decimal typed by a person ("0.004", "12", "1,000.5" is refused): the Dec, or null. */
export function parseDecimal(text: string, maxPlaces: number): Dec | null {
  const t = text.trim();
  if (!/^\d{1,12}(\.\d+)?$/.test(t)) return null;
  const places = t.includes(".") ? t.length - t.indexOf(".") - 1 : 0;
  if (places > maxPlaces) return null;
  return new Dec(t);
}

/** An amount with its currency, for people: "USD 1,234.50" (exact: formatted from the string, not a float). */
export function formatMoney(amount: string, currency: string): string {
  const negative = amount.startsWith("-");
  const [int, frac] = (negative ? amount.slice(1) : amount).split(".");
  const grouped = int.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return `${negative ? "−" : ""}${currency} ${grouped}${frac !== undefined ? `.${frac}` : ""}`;
}

export const isZero = (amount: string): boolean => new Dec(amount).isZero();
