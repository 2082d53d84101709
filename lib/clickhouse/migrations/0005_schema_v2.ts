import { createTableStatements, withoutColumns, type Placement } from "../schema";
import { callsViewStatements, CONCURRENCY_BY_QUARTER, PARTICIPANT_CALL_COLUMNS, PARTICIPANTS_BY_MONTH, PARTICIPANTS_BY_MONTH_DIMS, PARTICIPANTS_V2, V2_TABLES } from "../schema-v2";
import { moveCheckpointsStatement } from "../move-v2";

/**
 * Schema v2 of the call facts (schema-v2.ts; docs/decisions/0034-clickhouse-schema-v2.md):
 * the signed rows, the raw records, the uid codes, the pre-aggregates and the views that
 * keep them, and the per-host checkpoints of the move from v1 (move-v2.ts). Tables before
 * views: a view needs its source and its target. Columns added by later migrations (0008:
 * participants_v2's PARTICIPANT_CALL_COLUMNS) are left to them, so that every warehouse,
 * new or old, gets them the same way. participants_by_month and its view, whose view reads
 * 0008's columns, are created by 0010 (which recreated them on warehouses this migration
 * had created them on, before 0010 existed); participants_by_month_dims and its view by 0012; concurrency_by_quarter and its view by 0011.
 */
const AS_CREATED = V2_TABLES.filter((t) => t !== PARTICIPANTS_BY_MONTH && t !== PARTICIPANTS_BY_MONTH_DIMS && t !== CONCURRENCY_BY_QUARTER).map((t) =>
  t === PARTICIPANTS_V2 ? withoutColumns(t, PARTICIPANT_CALL_COLUMNS.map(([n]) => n)) : t,
);

export const migration0005 = {
  id: 5,
  name: "schema_v2",
  statements: (p: Placement, onCluster: boolean): string[] => [
    ...AS_CREATED.flatMap((t) => createTableStatements(p, t, onCluster)),
    ...callsViewStatements(p, onCluster),
    moveCheckpointsStatement(p, onCluster),
  ],
};
