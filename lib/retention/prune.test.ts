import { count, eq, lt, type SQL } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Db } from "@/db/client";
import { tablesOf } from "@/db/state";
import { addApp } from "@/lib/apps/registry";
import { freshState, STATE_DIALECTS, useTestEnv } from "@/lib/auth/test-support";
import { parseEnv } from "@/lib/config/env";
import type { PgDb } from "@/db/postgres/client";
import { storeDelivery } from "@/lib/ingest/postgres-inbox";
import { POSTGRES_SKIP_REASON } from "@/lib/postgres/test-postgres";
import { pruneOnce, RETENTION_LOCK_KEY } from "./prune";

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 27);

describe.each(STATE_DIALECTS)("retention of the audit log and sync runs (issue 27, item 10), state on %s", (dialect) => {
  let db: Db;
  let dispose: () => Promise<void>;

  beforeEach(async () => {
    useTestEnv();
    const state = await freshState(dialect);
    db = state.db;
    dispose = state.dispose;
    const acme = await addApp(db, { appId: "acme", name: "Acme", region: "us", apiKey: "key-acme-0001" });
    const idle = await addApp(db, { appId: "idle", name: "Idle", region: "us", apiKey: "key-idle-0001" });
    const { auditLog, syncRuns } = tablesOf(db);
    const audit = Array.from({ length: 5000 }, (_, d) => ({ atMs: NOW - (d * DAY) / 10, actorEmail: "a@b.c", action: `day-${d}` })); // 500 days, ten a day
    for (let i = 0; i < audit.length; i += 1000) await db.insert(auditLog).values(audit.slice(i, i + 1000));
    const run = (appPk: number, status: "succeeded" | "running" | "failed", startedMs: number) => ({ appPk, kind: "incremental" as const, trigger: "schedule" as const, status, startedMs });
    await db.insert(syncRuns).values([
      ...Array.from({ length: 201 }, (_, i) => run(acme.pk, "succeeded", NOW - (200 - i) * DAY)),
      run(acme.pk, "running", NOW - 150 * DAY), // a run still marked running is never pruned here
      run(idle.pk, "failed", NOW - 300 * DAY), // an app's latest run stays, however old
    ]);
  });

  afterEach(async () => {
    await dispose();
  });

  const countAudit = async (where?: SQL) => {
    const { auditLog } = tablesOf(db);
    const [row] = await db.select({ n: count() }).from(auditLog).where(where);
    return row!.n;
  };
  const countRuns = async (where: SQL | undefined) => {
    const { syncRuns } = tablesOf(db);
    const [row] = await db.select({ n: count() }).from(syncRuns).where(where);
    return row!.n;
  };

  it("prunes audit rows and sync runs past their kept days, in batches, and keeps each app's latest run", async () => {
    const { auditLog, syncRuns, apps } = tablesOf(db);
    const pruned = await pruneOnce(db, { auditDays: 365, syncRunsDays: 90 }, NOW);
    expect(await countAudit(lt(auditLog.atMs, NOW - 365 * DAY))).toBe(0);
    expect(await countAudit()).toBe(3651);
    expect(pruned.audit).toBe(5000 - 3651);
    expect(await countRuns(eq(syncRuns.status, "succeeded"))).toBe(91);
    expect(await countRuns(eq(syncRuns.status, "running"))).toBe(1);
    const [idle] = await db.select({ pk: apps.pk }).from(apps).where(eq(apps.appId, "idle"));
    expect(await countRuns(eq(syncRuns.appPk, idle!.pk))).toBe(1);
    expect(pruned.syncRuns).toBe(201 - 91);
  });

  it("keeps everything at 0 days", async () => {
    expect(await pruneOnce(db, { auditDays: 0, syncRunsDays: 0 }, NOW)).toEqual({ audit: 0, syncRuns: 0, deliveries: 0, liveSessions: 0 });
    expect(await countAudit()).toBe(5000);
  });
});

describe.skipIf(POSTGRES_SKIP_REASON)("retention of the webhook inbox over Postgres (several servers)", () => {
  let state: Awaited<ReturnType<typeof freshState>>;
  let db: Db;
  let appPk = 0;
  beforeEach(async () => {
    useTestEnv();
    state = await freshState("postgres");
    db = state.db;
    appPk = (await addApp(db, { appId: "acme", name: "Acme", region: "us", apiKey: "key-acme-0001" })).pk;
  });
  afterEach(async () => {
    await state.dispose();
  });

  const pool = (handle: Db) => (handle as unknown as PgDb).$client;
  const store = (id: string, receivedMs: number) =>
    storeDelivery(pool(db), {
      appPk, idemKey: `k-${id}`, trigger: "message_sent", webhook: "w", type: null, sessionId: null, outcome: "stored",
      body: JSON.stringify({ trigger: "message_sent", appId: "acme", data: {} }), receivedMs,
    });
  const keys = async () => (await pool(db).query<{ idem_key: string }>("SELECT idem_key FROM webhook_deliveries ORDER BY idem_key")).rows.map((r) => r.idem_key);

  it("prunes deliveries past their kept days that ClickHouse has, never one still queued, and calls' live state long over", async () => {
    // 4,500 old deliveries (more than a batch), forwarded; an old one still queued; a recent one.
    const old = NOW - 100 * DAY;
    await pool(db).query(
      `INSERT INTO webhook_deliveries (app_pk, idem_key, trigger, webhook, outcome, body, received_ms, last_received_ms)
       SELECT $1, 'old-' || i, 'message_sent', 'w', 'stored', '{}', $2::bigint + i, $2::bigint + i FROM generate_series(1, 4500) AS i`,
      [appPk, old],
    );
    await store("old-queued", old);
    await store("recent", NOW - 10 * DAY);
    await pool(db).query(
      `INSERT INTO live_sessions (app_pk, session_id, kind, status, last_event_ms) VALUES
         ($1, 'ended-long-ago', 'call', 'ended', $2), ($1, 'ended-yesterday', 'call', 'ended', $3), ($1, 'silent', 'call', 'ongoing', $4), ($1, 'ongoing', 'call', 'ongoing', $3)`,
      [appPk, NOW - 8 * DAY, NOW - DAY, NOW - 31 * DAY],
    );

    const pruned = await pruneOnce(db, { auditDays: 0, syncRunsDays: 0, deliveriesDays: 90 }, NOW);
    expect(pruned).toEqual({ audit: 0, syncRuns: 0, deliveries: 4500, liveSessions: 2 });
    expect(await keys()).toEqual(["k-old-queued", "k-recent"]);
    const live = await pool(db).query<{ session_id: string }>("SELECT session_id FROM live_sessions ORDER BY session_id");
    expect(live.rows.map((r) => r.session_id)).toEqual(["ended-yesterday", "ongoing"]);
    // 0 keeps deliveries forever.
    await pool(db).query("DELETE FROM delivery_forward_queue");
    expect((await pruneOnce(db, { auditDays: 0, syncRunsDays: 0, deliveriesDays: 0 }, NOW)).deliveries).toBe(0);
    expect(await keys()).toEqual(["k-old-queued", "k-recent"]);
  });

  it("one server prunes at a time: while another holds the prune, this one skips its turn; then it prunes", async () => {
    await store("old", NOW - 100 * DAY);
    await pool(db).query("DELETE FROM delivery_forward_queue");
    // Server B in the middle of its prune: it holds the lock on a connection of its own.
    const b = state.connect();
    const held = await pool(b).connect();
    try {
      await held.query("SELECT pg_advisory_lock($1)", [RETENTION_LOCK_KEY.toString()]);
      expect(await pruneOnce(db, { auditDays: 0, syncRunsDays: 0, deliveriesDays: 90 }, NOW)).toEqual({ audit: 0, syncRuns: 0, deliveries: 0, liveSessions: 0, skipped: true });
      expect(await keys()).toEqual(["k-old"]);
      await held.query("SELECT pg_advisory_unlock($1)", [RETENTION_LOCK_KEY.toString()]);
    } finally {
      held.release();
    }
    expect(await pruneOnce(db, { auditDays: 0, syncRunsDays: 0, deliveriesDays: 90 }, NOW)).toMatchObject({ deliveries: 1 });
    expect(await keys()).toEqual([]);
  });
});

describe("retention settings", () => {
  it("has documented defaults: deliveries 90 days, audit forever, sync runs 90 days", () => {
    const e = parseEnv({ AUTH_SECRET: "x".repeat(32) });
    expect([e.RETAIN_DELIVERIES_DAYS, e.RETAIN_AUDIT_DAYS, e.RETAIN_SYNC_RUNS_DAYS]).toEqual([90, 0, 90]);
    expect(() => parseEnv({ AUTH_SECRET: "x".repeat(32), RETAIN_AUDIT_DAYS: "a year" })).toThrow(/RETAIN_AUDIT_DAYS: must be a whole number/);
  });
});
