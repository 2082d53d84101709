import { qualified, localName, quoteIdentifier, type MigrationStatement, type Placement } from "../schema";
import { sql } from "../sql";
import { CALLS_V2_SESSION_CODE, CALLS_V2 } from "../schema-v2";

/**
 * `calls_v2.session_code`: the call's session code (schema-v2.ts SESSION_CODE_SQL), kept by
 * ClickHouse itself (a DEFAULT computed at every insert; no writer sends it). The reads test a call against a set of calls on every row — has it a
 * recording link, is its state cancelled, does it list a uid (conditions.ts) — and reading
 * and hashing every row's ~36-byte session id was most of a breakdown's time: with 8 bytes
 * of integer instead it halved (docs/decisions/0034, "Reading"). Rows stored before this
 * migration compute it when read, until merges rewrite their parts.
 */
export const migration0006 = {
  id: 6,
  name: "calls_session_code",
  statements: (p: Placement, onCluster: boolean): MigrationStatement[] => {
    const on = onCluster && p.cluster ? ` ON CLUSTER ${quoteIdentifier(p.cluster)}` : "";
    const [name, type] = CALLS_V2_SESSION_CODE;
    const add = (table: string): MigrationStatement => ({
      sql: `ALTER TABLE ${qualified(p.database, table)}${on} ADD COLUMN ${quoteIdentifier(name)} ${type}`,
      doneIf: sql`SELECT 1 FROM system.columns WHERE database = ${p.database} AND table = ${table} AND name = ${name}`.text,
    });
    // The local table first: a Distributed table's column must exist on the shards to be read.
    return p.cluster ? [add(localName(p, CALLS_V2.name)), add(CALLS_V2.name)] : [add(CALLS_V2.name)];
  },
};
