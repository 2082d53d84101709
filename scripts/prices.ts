/**
 * `npm run prices -- set|list|remove …`: price sheets of usage statements, per tenant
 * app (`--app ID`) or the account default (`--default`), each in force from a month.
 *   npm run prices -- set --default --from 2026-01 --currency USD --audio 0.004 --video 0.01 --recording 0.05
 *   npm run prices -- set --app acme-support --from 2026-07 --currency EUR --audio 0.0035 --video 0.009 --recording 0.04 --included-minutes 1000 --minimum 50
 */
import { Command } from "commander";
import { db } from "@/db";
import { listPriceSheets, removePriceSheet, setPriceSheet } from "@/lib/billing/price-sheets";
import { printTable, runCli } from "@/lib/cli/run";
import { loadDotEnv } from "@/lib/config/dotenv";

loadDotEnv();

/** Audit rows written from the command line name this actor. */
const CLI_ACTOR = { email: "cli" };

interface Scope {
  app?: string;
  default?: boolean;
}

function scopeOf(o: Scope): string | null {
  if (o.app !== undefined && o.default) throw new Error("give either --app ID or --default, not both");
  if (o.app === undefined && !o.default) throw new Error("give --app ID (one tenant app) or --default (the account default)");
  return o.app ?? null;
}

const program = new Command("prices").description("Price sheets of usage statements (per tenant app or the account default)").exitOverride();

program
  .command("set")
  .description("set the prices in force from a month (replaces that month's sheet of the same app or default)")
  .option("--app <appId>", "the tenant app these prices are for")
  .option("--default", "the account default, for apps without a sheet of their own")
  .requiredOption("--from <YYYY-MM>", "the first month these prices apply to")
  .requiredOption("--currency <code>", "ISO 4217 currency, e.g. USD, EUR, INR")
  .requiredOption("--audio <price>", "per audio participant-minute")
  .requiredOption("--video <price>", "per video participant-minute")
  .requiredOption("--recording <price>", "per recording (a call with a recording)")
  .option("--included-minutes <minutes>", "participant-minutes free each month (audio and video together)", "0")
  .option("--minimum <amount>", "the least a month costs", "0")
  .action(async (o: Scope & { from: string; currency: string; audio: string; video: string; recording: string; includedMinutes: string; minimum: string }) => {
    const sheet = await setPriceSheet(db(), CLI_ACTOR, {
      app: scopeOf(o), effectiveMonth: o.from, currency: o.currency, audioPerMinute: o.audio, videoPerMinute: o.video, perRecording: o.recording,
      includedMinutes: o.includedMinutes, monthlyMinimum: o.minimum,
    });
    console.log(`Set prices of ${sheet.app ?? "the account default"} from ${sheet.effectiveMonth}: ${sheet.currency} ${sheet.audioPerMinute}/audio min, ${sheet.videoPerMinute}/video min, ${sheet.perRecording}/recording, ${sheet.includedMinutes} min included, minimum ${sheet.monthlyMinimum}`);
  });

program
  .command("list")
  .description("list price sheets (the default first, then per app, oldest month first)")
  .option("--app <appId>", "only this app's sheets and the default")
  .option("--json", "print JSON")
  .action(async (o: { app?: string; json?: boolean }) => {
    const sheets = await listPriceSheets(db(), { app: o.app });
    if (o.json) return console.log(JSON.stringify(sheets, null, 2));
    if (sheets.length === 0) return console.log("No price sheet. Set one with: npm run prices -- set --default --from YYYY-MM --currency USD --audio … --video … --recording …");
    printTable(
      sheets.map((s) => ({
        app: s.app ?? "(default)", from: s.effectiveMonth, currency: s.currency, audioMin: s.audioPerMinute, videoMin: s.videoPerMinute, recording: s.perRecording,
        included: s.includedMinutes, minimum: s.monthlyMinimum, updated: `${new Date(s.updatedMs).toISOString().slice(0, 16)}Z by ${s.updatedBy}`,
      })),
    );
  });

program
  .command("remove")
  .description("remove the sheet of an app (or the default) from a month")
  .option("--app <appId>", "the tenant app")
  .option("--default", "the account default")
  .requiredOption("--from <YYYY-MM>", "the month the sheet takes effect")
  .action(async (o: Scope & { from: string }) => {
    const app = scopeOf(o);
    await removePriceSheet(db(), CLI_ACTOR, { app, effectiveMonth: o.from });
    console.log(`Removed the price sheet of ${app ?? "the account default"} from ${o.from}`);
  });

void runCli(async () => {
  await program.parseAsync(process.argv);
});
