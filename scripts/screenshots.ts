/**
 * `npx tsx scripts/screenshots.ts --url http://127.0.0.1:3000`: every page of a running
 * demo (`npm run demo`), signed in as the demo admin, at 1280 px (the whole page) and at
 * 390 px (a phone's first screen), as JPEGs in docs/screenshots/ (small enough to commit).
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import { chromium } from "@playwright/test";
import { Command } from "commander";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../playwright.config";

const opts = new Command("screenshots")
  .requiredOption("--url <url>", "the running dashboard")
  .option("--email <email>", "sign in as", "admin@callboard.demo")
  .option("--password <password>", "with", "callboard-demo")
  .option("--out <dir>", "where the images go", "docs/screenshots")
  .parse(process.argv)
  .opts<{ url: string; email: string; password: string; out: string }>();

const PAGES: Array<[name: string, path: string]> = [
  ["overview", "/?tz=UTC"],
  ["calls", "/calls?tz=UTC"],
  ["participants", "/participants?tz=UTC"],
  ["tenant-apps", "/apps?tz=UTC"],
  ["recordings", "/recordings?tz=UTC"],
  ["statements", "/statements"],
  ["live", "/live?tz=UTC"],
  ["events", "/events?tz=UTC"],
  ["sync", "/sync?tz=UTC"],
  ["alerts", "/alerts"],
  ["settings", "/settings"],
  ["settings-apps", "/settings/apps"],
  ["settings-users", "/settings/users"],
  ["settings-tokens", "/settings/tokens"],
  ["settings-audit", "/settings/audit"],
  ["settings-prices", "/settings/prices"],
  ["preferences", "/preferences"],
];

async function main(): Promise<void> {
  mkdirSync(opts.out, { recursive: true });
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  try {
    const context = await browser.newContext({ baseURL: opts.url, timezoneId: "UTC" });
    const page = await context.newPage();
    await page.goto("/signin");
    await page.getByLabel("Email").fill(opts.email);
    await page.getByLabel("Password").fill(opts.password);
    await page.getByRole("button", { name: /sign in/i }).click();
    await page.waitForURL((u) => !u.pathname.startsWith("/signin"));
    // The busiest call, for the call's own page.
    const calls = (await (await page.request.get("/api/v1/calls?perPage=1&sort=participants")).json()) as { data: Array<{ app: string; sessionId: string }> };
    const pages = [...PAGES];
    if (calls.data[0]) pages.splice(2, 0, ["call", `/calls/${encodeURIComponent(calls.data[0].sessionId)}?app=${calls.data[0].app}`]);
    for (const [width, height, fullPage] of [[1280, 900, true], [390, 844, false]] as const) {
      await page.setViewportSize({ width, height });
      for (const [name, url] of pages) {
        await page.goto(url);
        await page.waitForLoadState("networkidle").catch(() => undefined);
        await page.waitForTimeout(300);
        const file = path.join(opts.out, `${name}-${width}.jpg`);
        await page.screenshot({ path: file, fullPage, type: "jpeg", quality: 60 });
        console.log(file);
      }
    }
    await context.close();
  } finally {
    await browser.close();
  }
}

void main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
