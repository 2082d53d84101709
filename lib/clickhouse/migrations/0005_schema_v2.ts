import { createTableStatements, type Placement } from "../schema";
import { V2_TABLES, viewStatements } from "../schema-v2";
import { moveCheckpointsStatement } from "../move-v2";

/**
 * Schema v2 of the call facts (schema-v2.ts; docs/decisions/0034-clickhouse-schema-v2.md):
 * the signed rows, the raw records, the uid codes, the pre-aggregates and the views that
 * keep them, and the per-host checkpoints of the move from v1 (move-v2.ts). Tables before
 * views: a view needs its source and its target.
 */
export const migration0005 = {
  id: 5,
  name: "schema_v2",
  statements: (p: Placement, onCluster: boolean): string[] => [
    ...V2_TABLES.flatMap((t) => createTableStatements(p, t, onCluster)),
    ...viewStatements(p, onCluster),
    moveCheckpointsStatement(p, onCluster),
  ],
};
