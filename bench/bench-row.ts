/** One line of the bench's table: each bench returns its rows, bench/run.ts prints them. */
export interface BenchRow {
  area: string;
  metric: string;
  target: string;
  measured: string;
  /** Whether the measurement meets the target (undefined: informational). */
  ok?: boolean;
}
