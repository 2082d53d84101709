/**
 * `npm run sync -- [--app APPID] [--full] [--allow-growth] [--from-start]`: one sync, a
 * summary per app, non-zero exit if any app failed.
 */
import { Command } from "commander";
import { db } from "@/db";
import { loadDotEnv } from "@/lib/config/dotenv";
import { getAppById, listApps } from "@/lib/apps/registry";
import { printTable, runCli } from "@/lib/cli/run";
import { syncApp } from "@/lib/sync";

loadDotEnv();

/** Skipped records printed per app (a run keeps up to 100 with their reasons, shown on the Sync page). */
const SKIPPED_SHOWN = 10;

const program = new Command("sync")
  .description("Pull calls from the platform's Calls API into the warehouse")
  .option("--app <appId>", "only this app")
  .option("--full", "page through everything (a full reconcile)")
  .option(
    "--allow-growth",
    "let a run page on however far the app grows past the total the platform announced when the run began (a real backfill of a busy app); without it a run stops an app whose list keeps growing",
  )
  .option("--from-start", "start an unfinished backfill again from page 1 instead of resuming it")
  .exitOverride();

void runCli(async () => {
  program.parse(process.argv);
  const o = program.opts<{ app?: string; full?: boolean; allowGrowth?: boolean; fromStart?: boolean }>();
  const warehouse = db();
  const targets = o.app ? [await getAppById(warehouse, o.app)] : await listApps(warehouse);
  if (o.app && !targets[0]) throw new Error(`app "${o.app}" is not registered (see npm run apps -- list)`);
  if (targets.length === 0) throw new Error("no tenant app registered (npm run apps -- add …)");
  const rows: Array<Record<string, unknown>> = [];
  let failed = 0;
  const skippedLines: string[] = [];
  for (const app of targets) {
    if (!app) continue;
    const r = await syncApp(warehouse, app, { trigger: "cli", full: o.full, allowGrowth: o.allowGrowth, fromStart: o.fromStart });
    if (r.status !== "succeeded") failed++;
    rows.push({
      app: app.appId,
      status: r.status,
      pages: r.pages,
      "resumed at page": r.resumedFromPage ?? "",
      inserted: r.inserted,
      updated: r.updated,
      unchanged: r.unchanged,
      skipped: r.skipped,
      seconds: (r.durationMs / 1000).toFixed(1),
      error: r.error ?? "",
    });
    // The reasons, so that a record refused for impossible values (negative minutes…) is seen, not just counted.
    for (const s of r.skippedRecords.slice(0, SKIPPED_SHOWN)) skippedLines.push(`  ${app.appId} ${s.sessionId ?? "(no sessionId)"}: ${s.reason}`);
    if (r.skippedRecords.length > SKIPPED_SHOWN) skippedLines.push(`  ${app.appId}: … see the Sync page for the others`);
  }
  printTable(rows);
  if (skippedLines.length > 0) console.log(`Skipped records:\n${skippedLines.join("\n")}`);
  if (failed > 0) {
    console.error(`${failed} of ${rows.length} app(s) failed`);
    return 1;
  }
});
