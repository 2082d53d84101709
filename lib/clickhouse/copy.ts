import type { Db } from "@/db/client";
import type { ClickHouse } from "./client";
import { COPY_SOURCES, type Changed, type CopySource, type CopyTable } from "./copy-sources";
import { WRITE_V1_FACTS } from "./fact-schema-switch";
import { CallWriterV2 } from "./writer-v2";
import { flagLinkedCalls } from "./link-flags";
import { qualified } from "./schema";
import { raw, sql } from "./sql";

/**
 * `npm run warehouse -- copy --to clickhouse`: the SQLite warehouse's facts into ClickHouse,
 * for a user who outgrows one machine and keeps their history.
 *
 * - Idempotent: every row is written as the version SQLite holds (a call's updated_ms),
 *   into tables that keep one version per fact (schema.ts) — a row copied twice is one row.
 * - Resumable: after each batch, the table's checkpoint (in ClickHouse: copying into
 *   another ClickHouse starts over) records the last pk copied and since when; a run killed
 *   at any point and started again goes on from there, and first copies again the rows
 *   that changed since the earlier run began (calls re-synced, deliveries repeated), so a
 *   copy made while the server keeps running converges too.
 * - Checked: at the end, every table's rows are counted on both sides; a difference fails
 *   the command (CopyMismatchError) naming the table and both counts.
 * - Calls go to schema v2 too (lib/clickhouse/writer-v2.ts: a call copied again unchanged
 *   is a replay and skipped, a changed one cancels what it replaces), and to v1's `calls`
 *   while WRITE_V1_FACTS is on; v2's live calls (sum of signs) are counted as `calls_v2`.
 */

export interface CopyProgress {
  table: CopyTable;
  done: number;
  total: number;
}

export interface CopyOptions {
  /** Rows per insert (default 2,000). */
  batchSize?: number;
  /** Ignore the checkpoints: copy everything again (harmless: rows collapse to one version). */
  restart?: boolean;
  onProgress?: (p: CopyProgress) => void;
  /** Checked between batches: an aborted copy stops after the batch in flight, its checkpoint written. */
  signal?: AbortSignal;
  /** The clock (tests). */
  now?: () => number;
  /** Schema v2's writer (openShardsV2 with a cluster); default: one over `ch` alone, which only a single server allows. */
  writerV2?: CallWriterV2;
  /** Write v1's `calls` too (default: WRITE_V1_FACTS). */
  writeV1Facts?: boolean;
}

export interface TableCount {
  table: CopyTable | "calls_v2";
  copied: number;
  sqlite: number;
  clickhouse: number;
}

export class CopyMismatchError extends Error {
  constructor(readonly counts: TableCount[]) {
    const bad = counts.filter((c) => c.sqlite !== c.clickhouse);
    super(
      `count check failed: ${bad.map((c) => `${c.table}: SQLite ${c.sqlite}, ClickHouse ${c.clickhouse}`).join("; ")}. ` +
        "Rows written to either side while the copy ran can explain it: run the copy again (it resumes and converges).",
    );
    this.name = "CopyMismatchError";
  }
}

/** Rows changed this long before a run began are copied again by the next one (clocks of other writers may lag). */
const CLOCK_MARGIN_MS = 60_000;

interface Checkpoint {
  lastPk: number;
  sinceMs: number;
}

async function readCheckpoints(ch: ClickHouse): Promise<Map<string, Checkpoint>> {
  const table = raw(qualified(ch.placement.database, "copy_checkpoints"));
  const rows = await ch.rows<{ table_name: string; last_pk: number; since_ms: number }>(sql`SELECT table_name, last_pk, since_ms FROM ${table} FINAL`.text);
  return new Map(rows.map((r) => [r.table_name, { lastPk: r.last_pk, sinceMs: r.since_ms }]));
}

async function writeCheckpoint(ch: ClickHouse, table: CopyTable, c: Checkpoint, now: number): Promise<void> {
  await ch.insert("copy_checkpoints", [{ table_name: table, last_pk: c.lastPk, since_ms: c.sinceMs, updated_ms: now }]);
}

/** Copies one table: the rows changed since the last run (if any), then every row after the checkpoint. */
/** The link flags of the calls a batch of copied recordings belongs to, app by app. */
async function flagCallsOfLinks(writer: CallWriterV2, ch: ClickHouse, rows: ReadonlyArray<Record<string, unknown>>): Promise<void> {
  const byApp = new Map<number, string[]>();
  for (const r of rows) {
    const list = byApp.get(Number(r.app_pk)) ?? [];
    list.push(String(r.session_id));
    byApp.set(Number(r.app_pk), list);
  }
  for (const [appPk, sessions] of byApp) await flagLinkedCalls(writer, ch, appPk, sessions);
}

type ResolvedOptions = Required<Pick<CopyOptions, "batchSize" | "now" | "writerV2" | "writeV1Facts">> & CopyOptions;

async function copyTable(db: Db, ch: ClickHouse, src: CopySource, start: Checkpoint | undefined, runStart: number, o: ResolvedOptions): Promise<number> {
  const changed: Changed | undefined = start && src.checkpointed ? { upTo: start.lastPk, sinceMs: start.sinceMs } : undefined;
  const from = src.checkpointed ? (start?.lastPk ?? 0) : 0;
  const total = (changed ? src.total(db, 0, changed) : 0) + src.total(db, from);
  let done = 0;
  o.onProgress?.({ table: src.table, done, total });
  const pass = async (after: number, ch2?: Changed, checkpoint?: (lastPk: number) => Promise<void>): Promise<number> => {
    for (;;) {
      if (o.signal?.aborted) throw new Error("copy interrupted");
      const b = src.batch(db, after, o.batchSize, ch2);
      if (b.rows.length === 0) return after;
      if (!b.v2 || o.writeV1Facts) await ch.insert(src.table, b.rows);
      for (const [appPk, changes] of b.v2 ?? []) await o.writerV2.write(appPk, changes);
      // Links copied after their calls: the calls' link flags (calls_v2.has_link; link-flags.ts). The copy runs alone.
      if (src.table === "recordings") await flagCallsOfLinks(o.writerV2, ch, b.rows);
      after = b.lastPk;
      done += b.rows.length;
      await checkpoint?.(after);
      o.onProgress?.({ table: src.table, done, total: Math.max(total, done) });
    }
  };
  // Changed rows first: until they are in, the old checkpoint (and its `since`) stays.
  if (changed) await pass(0, changed);
  // From here on, every row up to the checkpoint is in as it was at this run's start or later.
  const since = runStart - CLOCK_MARGIN_MS;
  const save = (lastPk: number) => writeCheckpoint(ch, src.table, { lastPk, sinceMs: since }, o.now());
  const last = await pass(from, undefined, src.checkpointed ? save : undefined);
  if (src.checkpointed) await save(last); // also when nothing was new: the next run looks for changes since this one
  return done;
}

/** SQLite's and ClickHouse's row counts of each table, over the apps SQLite holds. */
export async function countBoth(db: Db, ch: ClickHouse, writeV1Facts = WRITE_V1_FACTS): Promise<Array<Omit<TableCount, "copied">>> {
  const apps = db.$client.prepare("SELECT pk FROM apps ORDER BY pk").pluck().all() as number[];
  const q = (sqlite: string) => db.$client.prepare(sqlite).pluck().get() as number;
  const t = (name: string) => raw(qualified(ch.placement.database, name));
  const inApps = apps.length === 0 ? raw("0") : sql`app_pk IN ${apps}`;
  const count = async (query: string) => Number((await ch.rows<{ n: number }>(query))[0]?.n ?? 0);
  // Deliveries are pruned from SQLite after a while: ClickHouse is counted from SQLite's oldest one on.
  const oldest = q("SELECT coalesce(min(received_ms), 0) FROM webhook_deliveries");
  const calls = q("SELECT count(*) FROM calls");
  return [
    ...(writeV1Facts ? [{ table: "calls" as const, sqlite: calls, clickhouse: await count(sql`SELECT count() AS n FROM ${t("calls")} FINAL WHERE deleted = 0 AND ${inApps}`.text) }] : []),
    { table: "calls_v2", sqlite: calls, clickhouse: await count(sql`SELECT sum(sign) AS n FROM ${t("calls_v2")} WHERE ${inApps}`.text) },
    { table: "recordings", sqlite: q("SELECT count(*) FROM recordings"), clickhouse: await count(sql`SELECT count() AS n FROM ${t("recordings")} FINAL WHERE deleted = 0 AND ${inApps}`.text) },
    {
      table: "webhook_deliveries",
      sqlite: q("SELECT count(*) FROM webhook_deliveries"),
      clickhouse: await count(sql`SELECT count() AS n FROM ${t("webhook_deliveries")} FINAL WHERE ${inApps} AND received_ms >= ${oldest}`.text),
    },
    { table: "event_counts", sqlite: q("SELECT count(*) FROM event_counts"), clickhouse: await count(sql`SELECT count() AS n FROM ${t("event_counts")} FINAL WHERE ${inApps}`.text) },
    // Version 0: filled in ClickHouse from deliveries SQLite no longer holds (lib/clickhouse/client-sessions-backfill.ts).
    { table: "client_sessions", sqlite: q("SELECT count(*) FROM client_sessions"), clickhouse: await count(sql`SELECT count() AS n FROM ${t("client_sessions")} FINAL WHERE ${inApps} AND version > 0`.text) },
  ];
}

/**
 * Copies every fact table, then checks the counts (throws CopyMismatchError on a
 * difference). The schema must exist: migrate first (migrateClickHouse: every host).
 */
export async function copyToClickHouse(db: Db, ch: ClickHouse, options: CopyOptions = {}): Promise<TableCount[]> {
  if (!options.writerV2 && ch.placement.cluster) throw new Error("copying to a cluster needs each shard's client for schema v2: pass writerV2 (openShardsV2)");
  const o: ResolvedOptions = {
    batchSize: 2000, now: Date.now, writeV1Facts: WRITE_V1_FACTS, ...options,
    // An option given as undefined keeps the default: one server is its own only shard.
    writerV2: options.writerV2 ?? new CallWriterV2(ch, [{ client: ch, weight: 1 }]),
  };
  const runStart = o.now();
  const checkpoints = o.restart ? new Map<string, Checkpoint>() : await readCheckpoints(ch);
  const copied = new Map<CopyTable, number>();
  for (const src of COPY_SOURCES) copied.set(src.table, await copyTable(db, ch, src, checkpoints.get(src.table), runStart, o));
  const counts = (await countBoth(db, ch, o.writeV1Facts)).map((c) => ({ ...c, copied: copied.get(c.table === "calls_v2" ? "calls" : c.table) ?? 0 }));
  if (counts.some((c) => c.sqlite !== c.clickhouse)) throw new CopyMismatchError(counts);
  return counts;
}
