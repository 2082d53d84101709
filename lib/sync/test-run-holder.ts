/**
 * Test fixture: a Callboard server in the middle of a sync, as far as the state sees it:
 * it has begun a run of one app (lease taken, run row written), recorded a cursor, and
 * keeps renewing the lease — until the test SIGKILLs it. Env: STATE (a SQLite file, or a
 * postgres:// URL), APP_ID, LEASE_MS, COMMITTED_PAGE. Prints `running <runPk>`, or
 * `refused` and exits 2 when another run holds the app.
 */
import { openDatabase, type Db } from "@/db/client";
import { openPostgres } from "@/db/postgres/client";
import { stateDbOfPostgres } from "@/db/state";
import { getAppById } from "@/lib/apps/registry";
import { logger } from "@/lib/log/logger";
import { parsePostgresConfig } from "@/lib/postgres/config";
import { newOwnerId } from "../locks/sync-lock";
import { beginRun, keepSyncLease, saveRunProgress } from "./run-record";
import type { SyncSummary } from "./summary";

const state = process.env.STATE ?? "";
const db: Db = state.startsWith("postgres") ? stateDbOfPostgres(openPostgres(parsePostgresConfig(state), { max: 2 })) : openDatabase(state);
const app = await getAppById(db, process.env.APP_ID ?? "");
if (!app) throw new Error("fixture: app not found");
const leaseMs = Number(process.env.LEASE_MS);
const owner = newOwnerId();
const summary = { kind: "full", skippedRecords: [] } as unknown as SyncSummary;
const run = await beginRun(db, app, owner, leaseMs, { trigger: "test", perPage: 100 }, summary, Date.now());
if (!run) {
  process.stdout.write("refused\n");
  process.exit(2);
}
const committedPage = Number(process.env.COMMITTED_PAGE);
await saveRunProgress(db, run.runPk, {
  pages: committedPage, fetched: committedPage * 100, inserted: committedPage * 100, updated: 0, unchanged: 0, skipped: 0, refreshed: 0,
  perPage: 100, committedPage, announcedTotal: null,
});
keepSyncLease(db, app.pk, owner, leaseMs, () => process.exit(3), logger);
process.stdout.write(`running ${run.runPk}\n`);
// Stay alive (keepSyncLease's timer is unref'd) until killed.
setInterval(() => undefined, 1 << 30);
