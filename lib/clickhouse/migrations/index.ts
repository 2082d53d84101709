import { CLIENT_SESSIONS, COPY_CHECKPOINTS, FACT_TABLES, type MigrationStatement, type Placement } from "../schema";
import { migration0001 } from "./0001_facts";
import { migration0002 } from "./0002_copy_checkpoints";
import { migration0003 } from "./0003_client_sessions";
import { migration0004 } from "./0004_call_arrival";
import { migration0005 } from "./0005_schema_v2";
import { migration0006 } from "./0006_calls_session_code";
import { migration0007 } from "./0007_calls_has_link";
import { migration0008 } from "./0008_participant_call_columns";
import { migration0010 } from "./0010_participants_by_month_per_call";
import { migration0011 } from "./0011_concurrency_by_quarter";
import { migration0012 } from "./0012_participants_by_month_dims";
import { V2_TABLES } from "../schema-v2";
import type { ClickHouse } from "../client";

/**
 * The ClickHouse migrations, in order, like db/migrations for SQLite: a new one is a new
 * numbered file added here, never an edit of an applied one. ClickHouse DDL is not
 * transactional, so every statement must be idempotent (CREATE … IF NOT EXISTS, or a
 * statement with a `doneIf` query: 18.16 has no ADD COLUMN IF NOT EXISTS): a migration
 * interrupted half way is simply run again. Ids may have gaps (each host records the ids
 * it applied, and applies the others in this order): two branches may take neighbouring numbers.
 */
export interface Migration {
  id: number;
  name: string;
  /** Its statements for this placement (`onCluster`: written with ON CLUSTER, run once). */
  statements: (p: Placement, onCluster: boolean) => MigrationStatement[];
  /**
   * A data step run on every host after the statements, before the migration is recorded
   * (rows stored before a column existed, filled): it must resume by itself when run again.
   */
  fill?: (ch: ClickHouse, p: Placement) => Promise<unknown>;
}

export const MIGRATIONS: readonly Migration[] = [migration0001, migration0002, migration0003, migration0004, migration0005, migration0006, migration0007, migration0008, migration0010, migration0011, migration0012];

/** The tables the migrations create (each host's local ones, in a cluster): what `/api/health` looks for on every shard. */
export const MIGRATED_TABLES: readonly string[] = [...FACT_TABLES, COPY_CHECKPOINTS, CLIENT_SESSIONS, ...V2_TABLES].map((t) => t.name);
