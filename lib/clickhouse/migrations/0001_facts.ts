import { FACT_TABLES, createTableStatements, type Placement } from "../schema";

/** The fact tables: calls with their participants, recordings, event counts, webhook deliveries. */
export const migration0001 = {
  id: 1,
  name: "facts",
  statements: (p: Placement, onCluster: boolean): string[] => FACT_TABLES.flatMap((t) => createTableStatements(p, t, onCluster)),
};
