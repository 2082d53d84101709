import { CALLS, FACT_TABLES, createTableStatements, withoutColumns, type Placement } from "../schema";

/**
 * The fact tables as first created: calls with their participants, recordings, event
 * counts, webhook deliveries. Columns added by later migrations (0004: `calls.arrival`)
 * are left to them, so that every warehouse, new or old, gets them the same way.
 */
const AS_CREATED = FACT_TABLES.map((t) => (t === CALLS ? withoutColumns(CALLS, ["arrival"]) : t));

export const migration0001 = {
  id: 1,
  name: "facts",
  statements: (p: Placement, onCluster: boolean): string[] => AS_CREATED.flatMap((t) => createTableStatements(p, t, onCluster)),
};
