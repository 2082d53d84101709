import type { Existing } from "./pending-rows";

/**
 * What a sync asks of the warehouse it writes to, to tell new, changed and unchanged
 * calls apart and to find the calls still ongoing: SQLite's CallWriter answers at once,
 * ClickHouse (clickhouse-sink.ts) over the network, hence the optional promises.
 */
export interface StoredCalls {
  storedCount(): number | Promise<number>;
  /** What is stored for each of the app's sessionIds, in order (undefined: not stored). */
  findMany(sessionIds: string[]): Array<Existing | undefined> | Promise<Array<Existing | undefined>>;
  ongoingSessionIds(): string[] | Promise<string[]>;
}
