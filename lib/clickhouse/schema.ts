/**
 * The ClickHouse warehouse: the fact tables, and how each is created on one server or
 * on every shard of a cluster. Decision record: docs/decisions/0014-clickhouse-warehouse.md.
 *
 * Every fact table is a ReplacingMergeTree keyed by the fact's identity, with a version
 * column: a fact written again (a re-synced call, a delivery forwarded twice, the copy
 * run again) replaces its earlier versions instead of adding to them, and readers see
 * only the newest version (`FINAL`). All versions of a fact land on one shard: the
 * sharding key is a hash of the leading columns of the table's key. Deletes are
 * tombstones: a newer version with `deleted = 1`.
 *
 * Names: readers and writers always use the plain name (`calls`). With a cluster that
 * name is a Distributed table in front of `<name>_local` on every shard; on one server it
 * is the table itself. Only a query that must stay on each shard (an IN subquery over a
 * co-sharded table) names the local table, through `localName`.
 */

import { sql } from "./sql";

export interface TableSpec {
  name: string;
  /** Column definitions, in order. */
  columns: ReadonlyArray<readonly [name: string, type: string]>;
  /** The MergeTree engine clause (without `ENGINE =`). */
  engine: string;
  orderBy: string;
  /** A PARTITION BY expression (e.g. monthly: `toYYYYMM(start_at)`), or none. */
  partitionBy?: string;
  /** Distributed sharding expression: a function of the ORDER BY key's leading columns. */
  shardBy: string;
}

/** A participant column of `calls`: one array per participant field, all the same length. */
const P = (name: string, type: string) => [`p_${name}`, `Array(${type})`] as const;

export const CALLS: TableSpec = {
  name: "calls",
  columns: [
    ["app_pk", "UInt32"],
    ["session_id", "String"],
    /** The writer's stamp (epoch ms, the SQLite row's updated_ms when copied): the highest wins. */
    ["version", "UInt64"],
    /** 1: a tombstone (the call was deleted); its other columns mean nothing. */
    ["deleted", "UInt8"],
    ["mid", "Nullable(String)"],
    ["type", "Nullable(String)"],
    ["mode", "Nullable(String)"],
    ["status", "Nullable(String)"],
    ["initiator", "Nullable(String)"],
    ["receiver", "Nullable(String)"],
    ["receiver_type", "Nullable(String)"],
    ["initiated_at", "Nullable(Int64)"],
    ["started_at", "Nullable(Int64)"],
    ["ended_at", "Nullable(Int64)"],
    /** startedAt, or initiatedAt for calls never started: what time filters use. */
    ["start_at", "Int64"],
    /** The platform's flag; a recording webhook counts too, at read time (`recordings`). */
    ["platform_has_recording", "UInt8"],
    /** Minutes as exact integer thousandths (the platform sends at most 3 decimals): sums are exact. */
    ["total_audio_minutes_x1000", "Int64"],
    ["total_video_minutes_x1000", "Int64"],
    ["total_duration_minutes_x1000", "Int64"],
    ["duration_seconds", "Int64"],
    ["total_participants", "UInt32"],
    ["source", "String"],
    ["content_hash", "Nullable(String)"],
    /** The platform's record exactly as received (JSON text). */
    ["raw", "Nullable(String)"],
    ["first_seen_ms", "Int64"],
    ["updated_ms", "Int64"],
    // The participants, stored with their call: a new version of the call replaces them all.
    P("seq", "UInt32"),
    P("uid", "String"),
    P("state", "Nullable(String)"),
    P("is_joined", "UInt8"),
    P("total_audio_minutes_x1000", "Int64"),
    P("total_video_minutes_x1000", "Int64"),
    P("total_duration_minutes_x1000", "Int64"),
    P("device_id", "Nullable(String)"),
    P("joined_at", "Nullable(Int64)"),
    P("left_at", "Nullable(Int64)"),
    P("mid", "Nullable(String)"),
    /** The participant's fields Callboard has no column for, as JSON (null: none). */
    P("raw", "Nullable(String)"),
    /**
     * When the call first arrived, as an ordinal that only grows: the SQLite pk when copied
     * (copy-sources.ts), else the sync's arrival clock (lib/sync/clickhouse-sink.ts). Kept
     * across versions, like first_seen_ms. It breaks ties in the calls list as SQLite's pk
     * does in the in-memory engine; 0 on rows written before migration 0004 (ties then go
     * by app and session). Decision 0014 §10.
     */
    ["arrival", "UInt64"],
  ],
  engine: "ReplacingMergeTree(version)",
  orderBy: "(app_pk, session_id)",
  shardBy: "cityHash64(app_pk, session_id)",
};

export const RECORDINGS: TableSpec = {
  name: "recordings",
  columns: [
    ["app_pk", "UInt32"],
    ["session_id", "String"],
    /** The recording's identity within its call: start_time, or −received_ms when the webhook had none. */
    ["start_key", "Int64"],
    ["version", "UInt64"],
    ["deleted", "UInt8"],
    ["recording_url", "String"],
    ["recording_date", "Nullable(String)"],
    ["duration", "Nullable(Float64)"],
    ["start_time", "Nullable(Int64)"],
    ["received_ms", "Int64"],
  ],
  engine: "ReplacingMergeTree(version)",
  orderBy: "(app_pk, session_id, start_key)",
  // The call's own shard: "has a recording" is answered shard by shard.
  shardBy: "cityHash64(app_pk, session_id)",
};

export const EVENT_COUNTS: TableSpec = {
  name: "event_counts",
  columns: [
    ["app_pk", "UInt32"],
    ["trigger", "String"],
    /** 15-minute bucket of the event's time (epoch seconds, a multiple of 900). */
    ["bucket_start", "Int64"],
    /** The bucket's absolute count as SQLite holds it: counts only grow, so the highest is the newest. */
    ["count", "UInt64"],
  ],
  engine: "ReplacingMergeTree(count)",
  orderBy: "(app_pk, bucket_start, trigger)",
  shardBy: "cityHash64(app_pk, bucket_start, trigger)",
};

export const WEBHOOK_DELIVERIES: TableSpec = {
  name: "webhook_deliveries",
  columns: [
    ["app_pk", "UInt32"],
    ["idem_key", "String"],
    /** The writer's stamp (e.g. last_received_ms): a repeat forwarded later replaces the row. */
    ["version", "UInt64"],
    ["trigger", "String"],
    ["category", "String"],
    ["webhook", "String"],
    ["type", "Nullable(String)"],
    ["session_id", "Nullable(String)"],
    ["outcome", "String"],
    ["body", "String"],
    ["received_ms", "Int64"],
    ["bucket_start", "Int64"],
    ["repeat_count", "UInt32"],
    ["last_received_ms", "Int64"],
  ],
  engine: "ReplacingMergeTree(version)",
  orderBy: "(app_pk, idem_key)",
  shardBy: "cityHash64(app_pk, idem_key)",
};

/**
 * What each participant session joined with (SQLite `client_sessions`, kept at ingest:
 * lib/ingest/client-sessions.ts). One row per (app, session, occupant, joined_at); the
 * version is SQLite's change stamp (`seq`: a leave bumps it), 0 for rows filled here from
 * old deliveries only ClickHouse still holds, so anything SQLite sends wins. With its
 * call on one shard: call filters are answered shard by shard.
 */
export const CLIENT_SESSIONS: TableSpec = {
  name: "client_sessions",
  columns: [
    ["app_pk", "UInt32"],
    ["session_id", "String"],
    ["occupant", "String"],
    /** joined_at, or −1 when the join did not say (the key cannot be Nullable). */
    ["joined_key", "Int64"],
    ["version", "UInt64"],
    ["joined_at", "Nullable(Int64)"],
    /** joined_at, else the second the join was received: what the period filters. */
    ["counted_at", "Int64"],
    ["left_at", "Nullable(Int64)"],
    ["trigger", "String"],
    ["platform", "Nullable(String)"],
    ["sdk", "Nullable(String)"],
    ["call_version", "Nullable(String)"],
    ["is_audio_only", "Nullable(UInt8)"],
    ["audio_call", "Nullable(UInt8)"],
    ["is_video_muted", "Nullable(UInt8)"],
    ["start_recording_on_call_start", "Nullable(UInt8)"],
    ["received_ms", "Int64"],
  ],
  engine: "ReplacingMergeTree(version)",
  orderBy: "(app_pk, session_id, occupant, joined_key)",
  shardBy: "cityHash64(app_pk, session_id)",
};

export const FACT_TABLES = [CALLS, RECORDINGS, EVENT_COUNTS, WEBHOOK_DELIVERIES] as const;

/**
 * Where `npm run warehouse -- copy --to clickhouse` stands, per source table: kept in the
 * destination, so that copying into another ClickHouse starts from the beginning.
 */
export const COPY_CHECKPOINTS: TableSpec = {
  name: "copy_checkpoints",
  columns: [
    ["table_name", "String"],
    /** Every SQLite row up to this pk is in ClickHouse… */
    ["last_pk", "Int64"],
    /** …as it was at this instant (epoch ms) or later: rows changed since are copied again. */
    ["since_ms", "Int64"],
    ["updated_ms", "UInt64"],
  ],
  engine: "ReplacingMergeTree(updated_ms)",
  orderBy: "table_name",
  shardBy: "cityHash64(table_name)",
};

/** Where the tables live: the database, and the cluster they are spread over (if any). */
export interface Placement {
  database: string;
  cluster: string | undefined;
}

/** The table that holds a shard's own rows: `<name>_local` in a cluster, else the table itself. */
export function localName(p: Placement, table: string): string {
  return p.cluster ? `${table}_local` : table;
}

/** `db.table`, both identifiers back-quoted. */
export function qualified(database: string, table: string): string {
  return `${quoteIdentifier(database)}.${quoteIdentifier(table)}`;
}

/** A back-quoted identifier (names come from code and validated config, never from requests). */
export function quoteIdentifier(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`not a plain identifier: ${JSON.stringify(name)}`);
  return `\`${name}\``;
}

/**
 * The statements creating a table where it belongs, each idempotent (IF NOT EXISTS):
 * one server: the table; a cluster: the local table and the Distributed table in front
 * of it, to run on every host (`onCluster`: once, with ON CLUSTER, where the cluster
 * has distributed DDL).
 */
export function createTableStatements(p: Placement, t: TableSpec, onCluster = false): string[] {
  const cols = t.columns.map(([n, type]) => `${quoteIdentifier(n)} ${type}`).join(",\n  ");
  const on = onCluster && p.cluster ? ` ON CLUSTER ${quoteIdentifier(p.cluster)}` : "";
  const local = qualified(p.database, localName(p, t.name));
  const partition = t.partitionBy ? ` PARTITION BY ${t.partitionBy}` : "";
  const create = `CREATE TABLE IF NOT EXISTS ${local}${on} (\n  ${cols}\n) ENGINE = ${t.engine}${partition} ORDER BY ${t.orderBy}`;
  if (!p.cluster) return [create];
  const distributed =
    `CREATE TABLE IF NOT EXISTS ${qualified(p.database, t.name)}${on} AS ${local} ` +
    `ENGINE = Distributed(${quoteIdentifier(p.cluster)}, ${quoteIdentifier(p.database)}, ${quoteIdentifier(localName(p, t.name))}, ${t.shardBy})`;
  return [create, distributed];
}

/**
 * A migration's statement: plain SQL, or SQL to skip when `doneIf` (a query) returns a row.
 * 18.16 has no `ADD COLUMN IF NOT EXISTS` (it came in 19.x, and was broken in 19.3), so a
 * column added by a migration interrupted half way is asked for in `system.columns`.
 */
export type MigrationStatement = string | { sql: string; doneIf: string };

/**
 * The statements adding column `name` of `t` (its type from the spec) where the table lives,
 * each skipped where the column already is: one server: the table; a cluster: the local
 * table and the Distributed table in front of it (a Distributed table copies its columns
 * when created), on every host (`onCluster`: once, with ON CLUSTER, asked of the host
 * that runs it). The column goes last, as in the spec.
 */
export function addColumnStatements(p: Placement, t: TableSpec, name: string, onCluster = false): MigrationStatement[] {
  const column = t.columns.find(([n]) => n === name);
  if (!column) throw new Error(`${t.name} has no column ${name} in its spec`);
  const on = onCluster && p.cluster ? ` ON CLUSTER ${quoteIdentifier(p.cluster)}` : "";
  const add = (table: string): MigrationStatement => ({
    sql: `ALTER TABLE ${qualified(p.database, table)}${on} ADD COLUMN ${quoteIdentifier(name)} ${column[1]}`,
    doneIf: sql`SELECT 1 FROM system.columns WHERE database = ${p.database} AND table = ${table} AND name = ${name}`.text,
  });
  return p.cluster ? [add(localName(p, t.name)), add(t.name)] : [add(t.name)];
}

/** `t` as it was before later migrations added `columns` (what an earlier migration created). */
export function withoutColumns(t: TableSpec, columns: readonly string[]): TableSpec {
  return { ...t, columns: t.columns.filter(([n]) => !columns.includes(n)) };
}
