/**
 * Test fixture: a separate process that syncs one app slowly and prints each page, so
 * that a test can SIGKILL it mid-way. Env: DB_FILE, APP_ID, PAGE_DELAY_MS; WRITE_V1_FACTS=1:
 * ClickHouse mode writes schema v1 beside v2, =0: v2 alone (the default, lib/clickhouse/fact-schema-switch.ts).
 */
import { openDatabase } from "@/db/client";
import { getAppById } from "@/lib/apps/registry";
import { syncApp } from "./sync-app";

const db = openDatabase(process.env.DB_FILE ?? "");
const app = await getAppById(db, process.env.APP_ID ?? "");
if (!app) throw new Error("fixture: app not found");
const delay = Number(process.env.PAGE_DELAY_MS ?? 50);
const r = await syncApp(db, app, {
  trigger: "test",
  perPage: 100,
  batchSize: 150,
  prefetch: 0,
  ...(process.env.WRITE_V1_FACTS === "0" || process.env.WRITE_V1_FACTS === "1" ? { clickHouse: { writeV1Facts: process.env.WRITE_V1_FACTS === "1" } } : {}),
  client: { fetch: async (u, init) => (await new Promise((res) => setTimeout(res, delay)), fetch(u, init)) },
  onPage: ({ page }) => process.stdout.write(`page ${page}\n`),
});
process.stdout.write(`done ${r.status}\n`);
