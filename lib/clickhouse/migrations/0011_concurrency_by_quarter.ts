import { createTableStatements, type MigrationStatement, type Placement } from "../schema";
import { CONCURRENCY_BY_QUARTER, concurrencyViewStatement } from "../schema-v2";
import { fillConcurrencyByQuarter } from "../concurrency-by-quarter-fill";

/**
 * concurrency_by_quarter and its view (schema-v2.ts): the concurrency heatmap reads per
 * quarter hour sums instead of every matching call row (docs/decisions/0034, "The heatmap
 * from a pre-aggregate (session 18)"). A new table, so every statement is a CREATE … IF NOT
 * EXISTS, on every host; then every host fills its own start months from its call rows
 * (concurrency-by-quarter-fill.ts, checkpointed, resumable). Run `npm run db:migrate` with
 * the writers stopped, as for 0007, 0008 and 0010.
 */
export const migration0011 = {
  id: 11,
  name: "concurrency_by_quarter",
  statements: (p: Placement, onCluster: boolean): MigrationStatement[] => [
    ...createTableStatements(p, CONCURRENCY_BY_QUARTER, onCluster),
    concurrencyViewStatement(p, onCluster),
  ],
  fill: fillConcurrencyByQuarter,
};
