import { addColumnStatements, CALLS, type MigrationStatement, type Placement } from "../schema";

/**
 * `calls.arrival`: the ordinal that breaks ties in the calls list as SQLite's pk does
 * (schema.ts; docs/decisions/0014 §10). Rows already stored get 0, and their ties go by
 * (app, session id) until the copy command writes them again.
 */
export const migration0004 = {
  id: 4,
  name: "call_arrival",
  statements: (p: Placement, onCluster: boolean): MigrationStatement[] => addColumnStatements(p, CALLS, "arrival", onCluster),
};
