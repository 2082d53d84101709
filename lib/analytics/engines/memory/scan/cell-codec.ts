/**
 * The cell codec: the one place that packs a call's categories into the small integer
 * the memory engine keys on, and unpacks it again — in TypeScript for the kernels and
 * the reports, and as SQL for the store's load. Nothing else does this arithmetic.
 *
 *   dims = type + 3 × mode + 12 × status + 60 × receiverType + 180 × hasRecording   (0..359)
 *   cell = dims + 360 × duration bucket                                           (0..2159)
 *
 * A category's code is its value's index among the known values (dims.ts), and the
 * next code ("other") for anything else, NULL included. Filters keep or drop whole
 * cells, so a table of the cells a filter keeps (cellFilter) is all a kernel tests.
 */
import { DIMENSION_VALUES, DURATION_BUCKETS, OTHER, type DimensionName } from "../../../dims";
import type { Filters } from "../../../filters";

/** Each dimension's column in `calls` and weight in dims (the product of the code counts before it). */
const LAYOUT = {
  type: { column: "type", weight: 1 },
  mode: { column: "mode", weight: 3 },
  status: { column: "status", weight: 12 },
  receiverType: { column: "receiver_type", weight: 60 },
} as const satisfies Record<DimensionName, { column: string; weight: number }>;

/** Weight of the has-recording bit. */
export const RECORDING_WEIGHT = 180;
/** dims codes: 0..DIMS − 1. */
export const DIMS = 360;
/** Cell codes: dims × duration bucket. */
export const CELLS = DIMS * DURATION_BUCKETS.length;

export const DIMENSION_NAMES = Object.keys(LAYOUT) as DimensionName[];

/** A dimension's code of a value (the "other" code for anything unknown or missing). */
export function codeOf(dim: DimensionName, value: string | null | undefined): number {
  const values: readonly string[] = DIMENSION_VALUES[dim];
  const i = value == null ? -1 : values.indexOf(value);
  return i >= 0 ? i : values.length;
}

/** Label of a dimension's code (its value, or `other`). */
export function labelOf(dim: DimensionName, code: number): string {
  const values: readonly string[] = DIMENSION_VALUES[dim];
  return values[code] ?? OTHER;
}

/** A dimension's code within a dims code. */
export function dimCode(dims: number, dim: DimensionName): number {
  return Math.floor(dims / LAYOUT[dim].weight) % (DIMENSION_VALUES[dim].length + 1);
}

/** 1 when a dims code has a recording, else 0. */
export function recordingOf(dims: number): number {
  return Math.floor(dims / RECORDING_WEIGHT);
}

/** The dims code of a cell. */
export function dimsOfCell(cell: number): number {
  return cell % DIMS;
}

/** The duration bucket (DURATION_BUCKETS index) of a cell. */
export function bucketOfCell(cell: number): number {
  return Math.floor(cell / DIMS);
}

/** Which cells pass the categorical filters of `f` (1 = kept). */
export function cellFilter(f: Pick<Filters, DimensionName | "hasRecording">): Uint8Array {
  const ok = new Uint8Array(CELLS);
  const wanted = DIMENSION_NAMES.filter((d) => f[d] !== undefined).map((d) => [d, codeOf(d, f[d])] as const);
  const rec = f.hasRecording === undefined ? -1 : f.hasRecording ? 1 : 0;
  for (let c = 0; c < CELLS; c++) {
    const d = dimsOfCell(c);
    ok[c] = Number(wanted.every(([dim, code]) => dimCode(d, dim) === code) && (rec < 0 || recordingOf(d) === rec));
  }
  return ok;
}

/** SQL: the cell code of the `calls` row aliased `r` (the store's load). */
export function cellSql(r: string): string {
  const part = (dim: DimensionName) => {
    const whens = DIMENSION_VALUES[dim].map((v, i) => `WHEN '${v}' THEN ${i}`).join(" ");
    return `(CASE ${r}.${LAYOUT[dim].column} ${whens} ELSE ${DIMENSION_VALUES[dim].length} END)`;
  };
  const dims = DIMENSION_NAMES.map((d) => `${LAYOUT[d].weight} * ${part(d)}`).join(" + ");
  const bucket = `(CASE ${DURATION_BUCKETS.slice(0, -1).map((b, i) => `WHEN ${r}.duration_seconds < ${b.maxSeconds} THEN ${i}`).join(" ")} ELSE ${DURATION_BUCKETS.length - 1} END)`;
  return `(${dims} + ${RECORDING_WEIGHT} * (${r}.has_recording <> 0)) + ${DIMS} * ${bucket}`;
}
