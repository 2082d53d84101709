/** Minutes from the integer thousandths ClickHouse holds and sums exactly (the in-memory engine's round3 of the same sum). */
export const minutes = (x1000: number): number => x1000 / 1000;

/**
 * What breaks ties after a sort key in every list of calls (`dir`: the key's direction):
 * arrival (`calls_v2.arrival`, as the in-memory engine's SQLite pk), then the call's key for
 * rows stored before arrival was kept (decision 0014 §10).
 */
export const ARRIVAL_ORDER = (dir: "ASC" | "DESC"): string => `arrival ${dir}, app_pk ${dir}, session_id ${dir}`;
