import type Database from "better-sqlite3";
import { db, postgresStateDb } from "@/db";
import { openDatabase } from "@/db/client";
import { env } from "@/lib/config/env";
import { createIngestor, type Ingestor, type IngestorOptions } from "./ingest";
import { createPostgresIngestor } from "./postgres-inbox";
import { WalSyncer } from "./wal-sync";

/**
 * A connection of the ingest's own. It commits with `synchronous = NORMAL` and the
 * ingest answers only after a `WalSyncer` fsync of the WAL (off the event loop), so a
 * 200 means the delivery survives a power cut (docs/decisions/0003-webhook-ingest.md).
 */
export function openIngestConnection(file: string): Database.Database {
  const sqlite = openDatabase(file, { migrate: false }).$client;
  sqlite.pragma("synchronous = NORMAL");
  return sqlite;
}

const globalForIngest = globalThis as unknown as { callboardIngestor?: { file: string; ingestor: Ingestor } };

/**
 * The process's one ingestor (reused across dev reloads): over the SQLite file at
 * DATABASE_PATH, or with DATABASE_URL over the Postgres every server shares (each
 * delivery stored and queued for ClickHouse there before its 200; decision 0035 §6).
 */
export function getIngestor(options?: IngestorOptions): Ingestor {
  const pgDb = postgresStateDb();
  const file = pgDb ? `postgres:${env().DATABASE_URL}` : env().DATABASE_PATH;
  const cached = globalForIngest.callboardIngestor;
  if (cached && cached.file === file) return cached.ingestor;
  if (pgDb) {
    const ingestor = createPostgresIngestor(pgDb, { maxBodyBytes: options?.maxBodyBytes });
    globalForIngest.callboardIngestor = { file, ingestor };
    return ingestor;
  }
  const warehouse = db(); // migrates before the ingest's connection opens
  const memory = file === ":memory:";
  const sqlite = memory ? warehouse.$client : openIngestConnection(file);
  const ingestor = createIngestor(sqlite, { retainDeliveriesDays: env().RETAIN_DELIVERIES_DAYS, ...options, syncer: memory ? undefined : new WalSyncer(file) });
  globalForIngest.callboardIngestor = { file, ingestor };
  return ingestor;
}

/** Flushes queued deliveries (on shutdown). */
export function closeIngestor(): void {
  globalForIngest.callboardIngestor?.ingestor.close();
  globalForIngest.callboardIngestor = undefined;
}
