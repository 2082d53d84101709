/** `npm run sync -- [--app APPID] [--full]`: one sync, a summary per app, non-zero exit if any app failed. */
import { Command } from "commander";
import { db } from "@/db";
import { loadDotEnv } from "@/lib/config/dotenv";
import { getAppById, listApps } from "@/lib/apps/registry";
import { printTable, runCli } from "@/lib/cli/run";
import { syncApp } from "@/lib/sync";

loadDotEnv();

const program = new Command("sync")
  .description("Pull calls from the platform's Calls API into the warehouse")
  .option("--app <appId>", "only this app")
  .option("--full", "page through everything (a full reconcile)")
  .exitOverride();

void runCli(async () => {
  program.parse(process.argv);
  const o = program.opts<{ app?: string; full?: boolean }>();
  const warehouse = db();
  const targets = o.app ? [getAppById(warehouse, o.app)] : listApps(warehouse);
  if (o.app && !targets[0]) throw new Error(`app "${o.app}" is not registered (see npm run apps -- list)`);
  if (targets.length === 0) throw new Error("no tenant app registered (npm run apps -- add …)");
  const rows: Array<Record<string, unknown>> = [];
  let failed = 0;
  for (const app of targets) {
    if (!app) continue;
    const r = await syncApp(warehouse, app, { trigger: "cli", full: o.full });
    if (r.status !== "succeeded") failed++;
    rows.push({
      app: app.appId,
      status: r.status,
      pages: r.pages,
      inserted: r.inserted,
      updated: r.updated,
      unchanged: r.unchanged,
      skipped: r.skipped,
      seconds: (r.durationMs / 1000).toFixed(1),
      error: r.error ?? "",
    });
  }
  printTable(rows);
  if (failed > 0) {
    console.error(`${failed} of ${rows.length} app(s) failed`);
    return 1;
  }
});
