/** Minutes from the integer thousandths ClickHouse holds and sums exactly (the in-memory engine's round3 of the same sum). */
export const minutes = (x1000: number): number => x1000 / 1000;
