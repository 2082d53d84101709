import type Database from "better-sqlite3";
import { applyClientSessionChange, prepareClientSessionStatements } from "@/lib/ingest/client-sessions";
import { clientSessionChange, JOIN_TRIGGERS, LEAVE_TRIGGERS } from "@/lib/platform/client-session-facts";
import { isObject } from "@/lib/platform/webhook-envelope";
import { logger } from "@/lib/log/logger";

/**
 * One-off fills of a new table from the deliveries stored before it existed, run right
 * after the migrations by whoever opens the warehouse first (db/client.ts). The migration
 * that creates the table records which deliveries to read (`warehouse_backfills`); each
 * batch moves `after_pk` in the transaction that writes its rows, so a run stopped half
 * way goes on from there, and the row is removed when done. The fill goes through the
 * ingest's own code, so the rows are what the ingest would have written.
 */

const BATCH = 2_000;

interface Pass {
  /** Its row in warehouse_backfills. */
  name: string;
  triggers: readonly string[];
  /** The pass that follows over the same deliveries, if any. */
  next?: string;
}

/**
 * client_sessions (migration 0019): every join first, then every leave and end in the order
 * stored. The ingest takes a leave that came before its join from the live state; here the
 * live state is already final (an end may have moved it on), so joins go in first instead.
 */
const CLIENT_SESSION_PASSES: Pass[] = [
  { name: "client_sessions", triggers: JOIN_TRIGGERS, next: "client_sessions_leaves" },
  { name: "client_sessions_leaves", triggers: LEAVE_TRIGGERS },
];

interface Position {
  after_pk: number;
  upto_pk: number;
}

/** Runs the pending passes of the client_sessions fill; returns the deliveries read. */
export function backfillClientSessions(sqlite: Database.Database, batch = BATCH): number {
  const position = sqlite.prepare<[string], Position>("SELECT after_pk, upto_pk FROM warehouse_backfills WHERE name = ?");
  if (!CLIENT_SESSION_PASSES.some((p) => position.get(p.name))) return 0;
  const st = prepareClientSessionStatements(sqlite);
  const advance = sqlite.prepare<[number, string]>("UPDATE warehouse_backfills SET after_pk = ? WHERE name = ?");
  const finish = sqlite.prepare<[string]>("DELETE FROM warehouse_backfills WHERE name = ?");
  const start = sqlite.prepare<[string, number]>("INSERT OR IGNORE INTO warehouse_backfills (name, after_pk, upto_pk) VALUES (?, 0, ?)");
  let total = 0;
  const started = Date.now();
  let logged = started;
  for (const pass of CLIENT_SESSION_PASSES) {
    const read = sqlite.prepare<unknown[], { pk: number; app_pk: number; trigger: string; session_id: string | null; body: string; received_ms: number }>(
      `SELECT pk, app_pk, trigger, session_id, body, received_ms FROM webhook_deliveries
       WHERE pk > ? AND pk <= ? AND trigger IN (${pass.triggers.map(() => "?").join(", ")}) ORDER BY pk LIMIT ${batch}`,
    );
    // One batch per transaction, its position re-read inside it: two processes starting together never do a batch twice.
    const step = sqlite.transaction((): boolean => {
      const p = position.get(pass.name);
      if (!p) return false;
      const rows = read.all(p.after_pk, p.upto_pk, ...pass.triggers);
      for (const r of rows) {
        let data: unknown = null;
        try {
          const body = JSON.parse(r.body) as unknown;
          if (isObject(body)) data = body.data;
        } catch {
          // stored as received: says nothing
        }
        const change = clientSessionChange(r.app_pk, r.trigger, r.session_id, data, r.received_ms);
        if (change) applyClientSessionChange(st, change, false);
      }
      total += rows.length;
      if (rows.length < batch) {
        finish.run(pass.name);
        if (pass.next) start.run(pass.next, p.upto_pk);
        return false;
      }
      advance.run(rows[rows.length - 1].pk, pass.name);
      return true;
    });
    while (step.immediate()) {
      if (Date.now() - logged > 5_000) {
        logged = Date.now();
        logger.info({ deliveries: total, pass: pass.name }, "filling client_sessions from stored joins");
      }
    }
  }
  if (total > 0) logger.info({ deliveries: total, ms: Date.now() - started }, "client_sessions filled from stored joins");
  return total;
}

/** Every pending backfill (after migrations). */
export function runBackfills(sqlite: Database.Database): void {
  backfillClientSessions(sqlite);
}
