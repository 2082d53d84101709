import { createTableStatements, type Placement } from "../schema";
import { V2_BASE_TABLES } from "../schema-v2";

/**
 * The tables the v2 writers write (lib/clickhouse/writer-v2.ts): calls_v2, call_raw,
 * participants_v2, uids, on every shard. Migration 0005 (schema v2 with its pre-aggregates
 * and views) creates them too; each statement is IF NOT EXISTS, so whichever runs first
 * creates them and the other finds them. Written by the sync and the copy from now on,
 * beside v1 while WRITE_V1_FACTS is on (lib/clickhouse/fact-schema-switch.ts).
 */
export const migration0006 = {
  id: 6,
  name: "v2_writer_tables",
  statements: (p: Placement, onCluster: boolean): string[] => V2_BASE_TABLES.flatMap((t) => createTableStatements(p, t, onCluster)),
};
