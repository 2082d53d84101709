import { describe, expect, it } from "vitest";
import { formatMoney, minorUnits, parseDecimal, roundMoney, Dec } from "./money";
import { priceUsage, type PriceTerms } from "./pricing";

const terms = (over: Partial<PriceTerms> = {}): PriceTerms => ({
  sheetId: 1, scope: "default", effectiveMonth: "2026-01", currency: "USD", audioPerMinute: "0.004", videoPerMinute: "0.01",
  perRecording: "0.05", includedMinutes: "0", monthlyMinimum: "0", ...over,
});
const usage = { calls: 10, audioMinutes: "1000.125", videoMinutes: "333.333", recordings: 7, participants: 4 };

describe("money", () => {
  it("rounds once, half away from zero, to the currency's minor unit", () => {
    expect(roundMoney(new Dec("0.125"), "USD")).toBe("0.13");
    expect(roundMoney(new Dec("-0.125"), "USD")).toBe("-0.13");
    expect(roundMoney(new Dec("0.0049"), "USD")).toBe("0.00");
    expect(roundMoney(new Dec("-0.001"), "USD")).toBe("0.00");
    expect(roundMoney(new Dec("12.5"), "JPY")).toBe("13");
    expect(roundMoney(new Dec("1.2345"), "BHD")).toBe("1.235");
    expect(minorUnits("JPY")).toBe(0);
  });

  it("is exact where binary floats are not", () => {
    // 0.1 + 0.2 and 1.005 × 100 go wrong in doubles.
    expect(new Dec("0.1").plus("0.2").toFixed()).toBe("0.3");
    expect(roundMoney(new Dec("1.005"), "USD")).toBe("1.01");
    expect(roundMoney(new Dec("333.333").times("0.015"), "USD")).toBe("5.00");
  });

  it("parses what a person types, within its places", () => {
    expect(parseDecimal("0.0040", 6)?.toFixed()).toBe("0.004");
    expect(parseDecimal("1e3", 6)).toBeNull();
    expect(parseDecimal("-1", 6)).toBeNull();
    expect(parseDecimal("0.1234567", 6)).toBeNull();
    expect(formatMoney("-1234567.50", "EUR")).toBe("−EUR 1,234,567.50");
  });
});

describe("priceUsage", () => {
  it("prices each line exactly and rounds each once; the lines add up to the total", () => {
    const p = priceUsage(usage, terms());
    expect(p.lines.map((l) => [l.kind, l.billable, l.amount])).toEqual([
      ["audio", "1000.125", "4.00"], // 4.0005 → 4.00
      ["video", "333.333", "3.33"], // 3.33333
      ["recordings", "7", "0.35"],
    ]);
    expect(p.total).toBe("7.68");
  });

  it("included minutes go to the dearer kind first", () => {
    const p = priceUsage(usage, terms({ includedMinutes: "500" }));
    expect(p.lines[1]).toMatchObject({ kind: "video", included: "333.333", billable: "0.000", amount: "0.00" });
    expect(p.lines[0]).toMatchObject({ kind: "audio", included: "166.667", billable: "833.458", amount: "3.33" });
    const audioDearer = priceUsage(usage, terms({ includedMinutes: "500", audioPerMinute: "0.02" }));
    expect(audioDearer.lines[0]).toMatchObject({ included: "500.000", billable: "500.125", amount: "10.00" });
    expect(audioDearer.lines[1]).toMatchObject({ included: "0.000", amount: "3.33" });
  });

  it("the minimum tops a cheap month up, and leaves a dear one alone", () => {
    const cheap = priceUsage(usage, terms({ monthlyMinimum: "25.00" }));
    expect(cheap.minimumTopUp).toBe("17.32");
    expect(cheap.lines.at(-1)).toMatchObject({ kind: "minimum", amount: "17.32" });
    expect(cheap.total).toBe("25.00");
    const dear = priceUsage(usage, terms({ monthlyMinimum: "5" }));
    expect(dear.minimumTopUp).toBe("0.00");
    expect(dear.lines.some((l) => l.kind === "minimum")).toBe(false);
  });

  it("a currency without minor units prices in whole units", () => {
    const p = priceUsage(usage, terms({ currency: "JPY", audioPerMinute: "0.6", videoPerMinute: "1.5", perRecording: "10" }));
    expect(p.lines.map((l) => l.amount)).toEqual(["600", "500", "70"]);
    expect(p.total).toBe("1170");
  });
});

describe("priceUsage with impossible usage", () => {
  it("never prices a negative quantity: negative audio minutes do not grow the allowance and make video free", () => {
    // The red team's month: −1247.5 audio minutes, 1,000 video minutes at 0.01.
    const p = priceUsage({ calls: 3, audioMinutes: "-1247.500", videoMinutes: "1000.000", recordings: -2, participants: 2 }, terms({ audioPerMinute: "0.01", videoPerMinute: "0.01" }));
    expect(p.lines.map((l) => [l.kind, l.quantity, l.included, l.billable, l.amount])).toEqual([
      ["audio", "0.000", "0.000", "0.000", "0.00"],
      ["video", "1000.000", "0.000", "1000.000", "10.00"],
      ["recordings", "0", "0", "0", "0.00"],
    ]);
    expect(p.total).toBe("10.00");
    const withAllowance = priceUsage({ calls: 3, audioMinutes: "-1247.500", videoMinutes: "1000.000", recordings: 0, participants: 2 }, terms({ includedMinutes: "100", audioPerMinute: "0.01", videoPerMinute: "0.01" }));
    expect(withAllowance.lines[1]).toMatchObject({ included: "100.000", billable: "900.000", amount: "9.00" });
  });
});
