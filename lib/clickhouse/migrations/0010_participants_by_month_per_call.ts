import { createTableStatements, localName, qualified, quoteIdentifier, type MigrationStatement, type Placement } from "../schema";
import { sql } from "../sql";
import { PARTICIPANTS_BY_MONTH, PARTICIPANTS_VIEW, participantsViewStatement } from "../schema-v2";
import { rebuildParticipantsByMonth } from "../participants-by-month-fill";

/**
 * participants_by_month with every sum of the participants reports (schema-v2.ts): joined
 * and unanswered per distinct call (from 0008's first_joined_of_uid /
 * first_unanswered_of_uid; it summed is_joined rows before, and had no unanswered), so the
 * participants, apps and engagement reports read it for the whole months of a range
 * (docs/decisions/0034, "Participants from participants_by_month (session 17)").
 *
 * A SummingMergeTree names the columns it sums in its engine, which 18.16 cannot alter, so
 * the table is recreated, not altered: the view dropped, the target (and its Distributed
 * table) dropped and created again, the view created again; every step skipped where
 * already done, so a killed run is run again, on every host. Then every host rebuilds its
 * months from its participant rows (participants-by-month-fill.ts, checkpointed). Run
 * `npm run db:migrate` with the writers stopped, as for 0007 and 0008. On a new warehouse
 * this migration creates the table and its view (0005 leaves them to it).
 */
export const migration0010 = {
  id: 10,
  name: "participants_by_month_per_call",
  statements: (p: Placement, onCluster: boolean): MigrationStatement[] => {
    const on = onCluster && p.cluster ? ` ON CLUSTER ${quoteIdentifier(p.cluster)}` : "";
    const view = localName(p, PARTICIPANTS_VIEW);
    const hasUnanswered = (table: string) => sql`SELECT 1 FROM system.columns WHERE database = ${p.database} AND table = ${table} AND name = 'unanswered'`.text;
    const drop = (table: string): MigrationStatement => ({ sql: `DROP TABLE IF EXISTS ${qualified(p.database, table)}${on}`, doneIf: hasUnanswered(table) });
    const out: MigrationStatement[] = [
      {
        sql: `DROP TABLE IF EXISTS ${qualified(p.database, view)}${on}`,
        // Done when the view there already sums the distinct unanswered calls (created by this migration).
        doneIf: sql`SELECT 1 FROM system.tables WHERE database = ${p.database} AND name = ${view} AND position(create_table_query, 'first_unanswered_of_uid') > 0`.text,
      },
      drop(localName(p, PARTICIPANTS_BY_MONTH.name)),
    ];
    if (p.cluster) out.push(drop(PARTICIPANTS_BY_MONTH.name));
    out.push(...createTableStatements(p, PARTICIPANTS_BY_MONTH, onCluster), participantsViewStatement(p, onCluster));
    return out;
  },
  fill: rebuildParticipantsByMonth,
};
