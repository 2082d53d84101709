import { JOIN_TRIGGERS, joinFacts } from "@/lib/platform/client-session-facts";
import { isObject } from "@/lib/platform/webhook-envelope";
import type { ClickHouse } from "./client";
import { clientSessionRow } from "./rows";
import { qualified } from "./schema";
import { raw, sql } from "./sql";

/**
 * A ClickHouse warehouse that ran before `client_sessions` existed holds joins that SQLite
 * has since pruned (it keeps raw deliveries 90 days, ClickHouse keeps them all). Once,
 * after migration 0003, those joins are read from ClickHouse's own `webhook_deliveries` and
 * written as version 0: every row SQLite forwards or copies (version = its seq ≥ 1) wins
 * over them, so reading a join SQLite still has changes nothing. The bodies are parsed
 * here with the ingest's own code (ClickHouse 18.16 cannot read JSON reliably). They carry
 * no left time (leaves are not replayed): the clients report does not use it.
 * Done when `copy_checkpoints` holds `client_sessions_backfill`; a run stopped half way
 * starts again (its rows collapse by key).
 */

export const BACKFILL_CHECKPOINT = "client_sessions_backfill";
const BATCH = 5_000;

export async function backfillClientSessionsFromDeliveries(ch: ClickHouse, now = Date.now): Promise<number> {
  const t = (name: string) => raw(qualified(ch.placement.database, name));
  const done = await ch.rows<{ n: number }>(sql`SELECT count() AS n FROM ${t("copy_checkpoints")} FINAL WHERE table_name = ${BACKFILL_CHECKPOINT}`.text);
  if (Number(done[0]?.n ?? 0) > 0) return 0;
  let rows: Array<Record<string, unknown>> = [];
  let total = 0;
  const query = sql`SELECT app_pk AS appPk, ifNull(session_id, '') AS sessionId, trigger, body, received_ms AS receivedMs
    FROM ${t("webhook_deliveries")} FINAL WHERE trigger IN ${[...JOIN_TRIGGERS]}`.text;
  for await (const d of ch.stream<{ appPk: number; sessionId: string; trigger: string; body: string; receivedMs: number }>(query)) {
    let data: unknown = null;
    try {
      const body = JSON.parse(d.body) as unknown;
      if (isObject(body)) data = body.data;
    } catch {
      // stored as received: says nothing
    }
    rows.push(clientSessionRow(joinFacts(Number(d.appPk), d.sessionId, d.trigger, data, Number(d.receivedMs)), 0));
    if (rows.length >= BATCH) {
      await ch.insert("client_sessions", rows);
      total += rows.length;
      rows = [];
    }
  }
  await ch.insert("client_sessions", rows);
  total += rows.length;
  await ch.insert("copy_checkpoints", [{ table_name: BACKFILL_CHECKPOINT, last_pk: total, since_ms: 0, updated_ms: now() }]);
  return total;
}
