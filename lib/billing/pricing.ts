/**
 * Pricing one month of one app's usage under one price sheet: pure, exact, no I/O.
 * Lines: audio participant-minutes, video participant-minutes, recordings (calls with
 * a recording), then the monthly minimum's top-up when the usage costs less.
 *
 * Included minutes are one monthly allowance of participant-minutes, audio and video
 * together, applied to the dearer kind first (the customer gets the most from it;
 * equal prices: audio first). Rounding: money.ts (ROUNDING_RULE).
 */
import { Dec, fixed, minorUnits, minutesText, roundMoney, sumMoney } from "./money";

export interface Usage {
  calls: number;
  /** Participant-minutes, exact decimal text with 3 places. */
  audioMinutes: string;
  videoMinutes: string;
  /** Calls with a recording (the analytics report's `recordings`). */
  recordings: number;
  /** Distinct participant uids. */
  participants: number;
}

/** A price sheet's prices (decimal text): what a month is priced with. */
export interface Prices {
  /** ISO 4217. */
  currency: string;
  audioPerMinute: string;
  videoPerMinute: string;
  perRecording: string;
  /** Participant-minutes free each month, audio and video together. */
  includedMinutes: string;
  /** The least a month costs ("0.00": none). */
  monthlyMinimum: string;
}

/** The terms a statement is priced with: a sheet's prices and where they come from (frozen into an issued statement). */
export interface PriceTerms extends Prices {
  /** The id of the sheet priced with (null: none); the terms themselves are what counts, frozen on issue. */
  sheetId: number | null;
  /** Whose sheet: the app's own or the account default. */
  scope: "app" | "default";
  effectiveMonth: string;
}

export type LineKind = "audio" | "video" | "recordings" | "minimum" | "adjustment";

export interface StatementLine {
  kind: LineKind;
  label: string;
  /** Used: minutes (3 places) or a count; "" where it does not apply. */
  quantity: string;
  /** Of the quantity, what the included minutes cover. */
  included: string;
  /** quantity − included: what is priced. */
  billable: string;
  unitPrice: string;
  /** Rounded to the currency's minor unit. */
  amount: string;
  /** An adjustment line: the issued statement it corrects, and that month's usage it accounts for. */
  adjusts?: { number: string; month: string; usage: Usage };
}

export interface PricedUsage {
  lines: StatementLine[];
  /** Sum of the usage lines. */
  usageAmount: string;
  /** The minimum's top-up (0 when usage reaches it). */
  minimumTopUp: string;
  /** usageAmount + minimumTopUp. */
  total: string;
}

/**
 * Usage below zero is impossible (the sync refuses such records); should one reach a
 * statement anyway, it is priced as none. Left negative, it would grow the allowance in
 * `take` and make other minutes free.
 */
const noneBelowZero = (d: Dec): Dec => (d.isNegative() ? new Dec(0) : d);

export function priceUsage(usage: Usage, terms: PriceTerms): PricedUsage {
  const { currency } = terms;
  const audio = noneBelowZero(new Dec(usage.audioMinutes));
  const video = noneBelowZero(new Dec(usage.videoMinutes));
  const recordings = Math.max(0, usage.recordings);
  // The allowance goes to the dearer kind first.
  const videoFirst = new Dec(terms.videoPerMinute).gt(terms.audioPerMinute);
  let allowance = new Dec(terms.includedMinutes);
  const take = (used: Dec): Dec => {
    const covered = Dec.max(0, Dec.min(used, allowance));
    allowance = allowance.minus(covered);
    return covered;
  };
  const videoIncluded = videoFirst ? take(video) : new Dec(0);
  const audioIncluded = take(audio);
  const videoCovered = videoFirst ? videoIncluded : take(video);

  const minuteLine = (kind: "audio" | "video", label: string, used: Dec, included: Dec, price: string): StatementLine => {
    const billable = used.minus(included);
    return { kind, label, quantity: minutesText(used), included: minutesText(included), billable: minutesText(billable), unitPrice: price, amount: roundMoney(billable.times(price), currency) };
  };
  const lines: StatementLine[] = [
    minuteLine("audio", "Audio participant-minutes", audio, audioIncluded, terms.audioPerMinute),
    minuteLine("video", "Video participant-minutes", video, videoCovered, terms.videoPerMinute),
    {
      kind: "recordings",
      label: "Recordings (calls with a recording)",
      quantity: String(recordings),
      included: "0",
      billable: String(recordings),
      unitPrice: terms.perRecording,
      amount: roundMoney(new Dec(recordings).times(terms.perRecording), currency),
    },
  ];
  const usageAmount = sumMoney(lines.map((l) => l.amount), currency);
  const minimum = new Dec(terms.monthlyMinimum);
  const topUp = minimum.gt(usageAmount) ? minimum.minus(usageAmount) : new Dec(0);
  const minimumTopUp = fixed(topUp, minorUnits(currency));
  if (topUp.gt(0)) {
    lines.push({ kind: "minimum", label: `Monthly minimum (${fixed(minimum, minorUnits(currency))})`, quantity: "", included: "", billable: "", unitPrice: "", amount: minimumTopUp });
  }
  return { lines, usageAmount, minimumTopUp, total: sumMoney([usageAmount, minimumTopUp], currency) };
}

/** What changed in usage between two readings of the same month (later − earlier). */
export function usageDelta(later: Usage, earlier: Usage): Usage {
  return {
    calls: later.calls - earlier.calls,
    audioMinutes: minutesText(new Dec(later.audioMinutes).minus(earlier.audioMinutes)),
    videoMinutes: minutesText(new Dec(later.videoMinutes).minus(earlier.videoMinutes)),
    recordings: later.recordings - earlier.recordings,
    participants: later.participants - earlier.participants,
  };
}

export function sameUsage(a: Usage, b: Usage): boolean {
  return a.calls === b.calls && a.recordings === b.recordings && new Dec(a.audioMinutes).eq(b.audioMinutes) && new Dec(a.videoMinutes).eq(b.videoMinutes);
}
