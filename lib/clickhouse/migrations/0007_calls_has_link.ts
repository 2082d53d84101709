import { addColumnStatements, localName, qualified, quoteIdentifier, type MigrationStatement, type Placement } from "../schema";
import { sql } from "../sql";
import { CALL_RAW, CALLS_BY_BUCKET, CALLS_BY_MONTH, CALLS_V2, CALLS_VIEWS, callsViewStatements, HAS_LINK_COLUMN } from "../schema-v2";

/**
 * `has_link`: whether a recording link was delivered for the call, stored in its state
 * (calls_v2, and call_raw so that a writer cancels the state it replaces with the same
 * value) and kept as a dimension of calls_by_bucket / calls_by_month, so that the reports
 * showing or filtering on hasRecording (the platform's flag OR a link) read the
 * pre-aggregates instead of probing every call against the set of links
 * (docs/decisions/0034-clickhouse-schema-v2.md, "A stored link flag (session 16)").
 *
 * 18.16 cannot change a materialized view's SELECT: each calls view is dropped, its target
 * gains the column at the end of its sorting key (`ADD COLUMN … , MODIFY ORDER BY` in one
 * ALTER: a SummingMergeTree sums rows of equal key, so the flag must be in the key), and
 * the view is created again. Every step is skipped where already done, so a run killed
 * half way is run again. A block inserted between a view's drop and its creation would be
 * missing from the pre-aggregate: run `npm run db:migrate` before the writers start, as
 * for the move to v2. Rows stored before have has_link = 0 everywhere (consistent); the
 * calls with a link get their flag from `npm run db:migrate`'s link-flag pass afterwards
 * (lib/clickhouse/link-flags.ts), through the writer, which also corrects the pre-aggregates.
 */
export const migration0007 = {
  id: 7,
  name: "calls_has_link",
  statements: (p: Placement, onCluster: boolean): MigrationStatement[] => {
    const on = onCluster && p.cluster ? ` ON CLUSTER ${quoteIdentifier(p.cluster)}` : "";
    const [name, type] = HAS_LINK_COLUMN;
    const hasColumn = (table: string) => sql`SELECT 1 FROM system.columns WHERE database = ${p.database} AND table = ${table} AND name = ${name}`.text;
    const views = callsViewStatements(p, onCluster);
    const out: MigrationStatement[] = [...addColumnStatements(p, CALLS_V2, name, onCluster), ...addColumnStatements(p, CALL_RAW, name, onCluster)];
    [CALLS_BY_BUCKET, CALLS_BY_MONTH].forEach((target, i) => {
      const view = localName(p, CALLS_VIEWS[i]);
      const local = localName(p, target.name);
      out.push(
        {
          sql: `DROP TABLE IF EXISTS ${qualified(p.database, view)}${on}`,
          // Done when the view there already sums by has_link (created by this migration, or by 0005 on a new warehouse).
          doneIf: sql`SELECT 1 FROM system.tables WHERE database = ${p.database} AND name = ${view} AND position(create_table_query, 'has_link') > 0`.text,
        },
        { sql: `ALTER TABLE ${qualified(p.database, local)}${on} ADD COLUMN ${quoteIdentifier(name)} ${type}, MODIFY ORDER BY ${target.orderBy}`, doneIf: hasColumn(local) },
      );
      if (p.cluster) out.push({ sql: `ALTER TABLE ${qualified(p.database, target.name)}${on} ADD COLUMN ${quoteIdentifier(name)} ${type}`, doneIf: hasColumn(target.name) });
      out.push(views[i]);
    });
    return out;
  },
};
