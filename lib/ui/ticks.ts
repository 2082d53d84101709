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

/**
 * A step past the table (a value no sane warehouse holds, but a chart must still draw
 * it): 1, 2 or 5 × 10ⁿ of the unit (hours for minutes); near the largest double, where
 * such a step overflows, the top split in `most`.
 */
function stepBeyondTable(top: number, unit: "count" | "minutes", most: number): number {
  const scale = unit === "minutes" ? 60 : 1;
  const power = 10 ** Math.floor(Math.log10(top / scale / most));
  for (const m of [1, 2, 5, 10]) {
    const step = m * power * scale;
    const n = Math.ceil(top / step);
    if (n <= most && Number.isFinite(n * step)) return step;
  }
  return top / most;
}

/**
 * Ticks from 0 to the first step at or above `max`, at most `most` intervals (default 4):
 * never more than `most + 1` ticks, whatever `max` is (a tick count taken from the data
 * once made `new Array(1e290)` and a 500 on the overview).
 */
export function niceTicks(max: number, unit: "count" | "minutes" = "count", most = 4): number[] {
  const top = Number.isFinite(max) && max > 0 ? max : 1;
  const step = STEPS[unit].find((s) => Math.ceil(top / s) <= most) ?? stepBeyondTable(top, unit, most);
  const n = Math.min(most, Math.max(1, Math.ceil(top / step)));
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
