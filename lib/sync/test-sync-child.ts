/**
 * Test fixture: a separate process that syncs one app slowly and prints each page, so
 * that a test can SIGKILL it mid-way. Env: DB_FILE (the SQLite file) or STATE_URL (a
 * postgres:// URL: the state of several servers, with CLICKHOUSE_URL for the calls),
 * APP_ID, PAGE_DELAY_MS, LEASE_MS (optional); WRITE_V1_FACTS=1: ClickHouse mode writes
 * schema v1 beside v2, =0: v2 alone (the default, lib/clickhouse/fact-schema-switch.ts).
 */
import { openDatabase, type Db } from "@/db/client";
import { openPostgres } from "@/db/postgres/client";
import { stateDbOfPostgres } from "@/db/state";
import { getAppById } from "@/lib/apps/registry";
import { parsePostgresConfig } from "@/lib/postgres/config";
import { syncApp } from "./sync-app";

const stateUrl = process.env.STATE_URL;
const db: Db = stateUrl ? stateDbOfPostgres(openPostgres(parsePostgresConfig(stateUrl), { max: 4 })) : openDatabase(process.env.DB_FILE ?? "");
const app = await getAppById(db, process.env.APP_ID ?? "");
if (!app) throw new Error("fixture: app not found");
const delay = Number(process.env.PAGE_DELAY_MS ?? 50);
const r = await syncApp(db, app, {
  trigger: "test",
  perPage: 100,
  batchSize: 150,
  prefetch: 0,
  ...(process.env.LEASE_MS ? { leaseMs: Number(process.env.LEASE_MS) } : {}),
  ...(process.env.WRITE_V1_FACTS === "0" || process.env.WRITE_V1_FACTS === "1" ? { clickHouse: { writeV1Facts: process.env.WRITE_V1_FACTS === "1" } } : {}),
  client: { fetch: async (u, init) => (await new Promise((res) => setTimeout(res, delay)), fetch(u, init)) },
  onPage: ({ page }) => process.stdout.write(`page ${page}\n`),
});
process.stdout.write(`done ${r.status}\n`);
process.exit(0);
