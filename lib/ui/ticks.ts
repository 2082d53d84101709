/**
 * Round axis ticks: 0, then equal steps of 1, 2 or 5 × 10ⁿ for counts, and for minutes
 * whole minutes (1, 2, 5, 10, 15, 30) then whole hours (1, 2, 5, 10, 20, 50 h …), so an
 * axis reads 0 / 10h / 20h / 30h in the unit its tooltip uses, never 550 / 1.1K / 1.7K.
 */

const COUNT_MANTISSAS = [1, 2, 5];
const MINUTE_STEPS = [1, 2, 5, 10, 15, 30];
const HOUR_MANTISSAS = [1, 2, 5];

function countSteps(): number[] {
  const out: number[] = [];
  for (let e = 0; e <= 15; e++) for (const m of COUNT_MANTISSAS) out.push(m * 10 ** e);
  return out;
}

function minuteSteps(): number[] {
  const out = [...MINUTE_STEPS];
  for (let e = 0; e <= 10; e++) for (const m of HOUR_MANTISSAS) out.push(m * 10 ** e * 60);
  return out;
}

const STEPS = { count: countSteps(), minutes: minuteSteps() };

/** Ticks from 0 to the first step at or above `max`, at most `most` intervals (default 4). */
export function niceTicks(max: number, unit: "count" | "minutes" = "count", most = 4): number[] {
  const top = Number.isFinite(max) && max > 0 ? max : 1;
  const steps = STEPS[unit];
  const step = steps.find((s) => Math.ceil(top / s) <= most) ?? steps[steps.length - 1];
  const n = Math.max(1, Math.ceil(top / step));
  return Array.from({ length: n + 1 }, (_, i) => i * step);
}

/** A minutes tick as the tooltips write minutes: 0, 45m, 2h, 1h 30m. */
export function formatMinutesTick(minutes: number): string {
  if (minutes === 0) return "0";
  const h = Math.floor(minutes / 60);
  const m = Math.round(minutes % 60);
  if (h === 0) return `${m}m`;
  return m === 0 ? `${h.toLocaleString("en")}h` : `${h}h ${m}m`;
}
