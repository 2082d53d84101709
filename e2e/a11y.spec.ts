/**
 * Accessibility: an axe scan (WCAG 2 A and AA) of every page, in light and dark, fails on
 * any serious or critical violation. Screenshots of each page are kept as artifacts
 * (the operations pages at 1280 px and on a 390 px phone, light and dark).
 */
import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Page, type TestInfo } from "@playwright/test";
import { demoState, signIn } from "./fixture";
import { cookieHeader } from "./ops-helpers";

type Scheme = "light" | "dark";

async function scan(page: Page, name: string, scheme: Scheme, testInfo: TestInfo): Promise<string[]> {
  await page.emulateMedia({ colorScheme: scheme });
  // Charts and client parts settle before the scan.
  await page.waitForLoadState("networkidle").catch(() => undefined);
  const result = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze();
  const bad = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  if (bad.length) {
    await testInfo.attach(`axe-${name}-${scheme}.json`, { body: JSON.stringify(bad, null, 2), contentType: "application/json" });
  }
  return bad.map((v) => `${name} (${scheme}): ${v.id} [${v.impact}] ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(" | ")}`);
}

async function shoot(page: Page, name: string, testInfo: TestInfo): Promise<void> {
  const file = testInfo.outputPath(`${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  await testInfo.attach(name, { path: file, contentType: "image/png" });
}

const OPS_PAGES = ["/live", "/events?days=365", "/sync", "/settings", "/settings/apps"];

test("no serious or critical violation on any page", async ({ page, request }, testInfo) => {
  test.setTimeout(300_000);
  const state = demoState();
  const problems: string[] = [];

  // Signed out: the sign-in page.
  await page.goto("/signin");
  for (const scheme of ["light", "dark"] as const) problems.push(...(await scan(page, "signin", scheme, testInfo)));
  await shoot(page, "signin-1280-light", testInfo);

  await signIn(page, state.admin);
  const cookie = await cookieHeader(page);
  const app = state.emulator.apps[0].appId;
  const calls = (await (await request.get(`/api/v1/calls?app=${app}&perPage=1`, { headers: { cookie } })).json()) as { data: Array<{ sessionId: string }> };
  const sessionId = calls.data[0]?.sessionId;
  const pages: Array<[string, string]> = [
    ["overview", "/"],
    ["calls", "/calls"],
    // The heatmap's drill-down: its filter chip.
    ["calls-drilldown", "/calls?weekday=1&hour=10"],
    ["call-detail", sessionId ? `/calls/${encodeURIComponent(sessionId)}?app=${app}` : "/calls"],
    ["participants", "/participants"],
    ["participants-across", "/participants?view=across-apps"],
    ["alerts", "/alerts"],
    ["not-found", "/calls/nothing-here?app=nothing"],
    ["apps", "/apps"],
    ["recordings", "/recordings"],
    ["statements", "/statements?detail=true"],
    ["live", "/live"],
    ["events", "/events?days=365"],
    ["sync", "/sync"],
    ["settings", "/settings"],
    ["settings-apps", "/settings/apps"],
    ["settings-users", "/settings/users"],
    ["settings-tokens", "/settings/tokens"],
    ["settings-prices", "/settings/prices"],
    ["settings-audit", "/settings/audit"],
  ];
  for (const [name, path] of pages) {
    const res = await page.goto(path);
    expect.soft(res?.status(), path).toBe(name === "not-found" ? 404 : 200);
    for (const scheme of ["light", "dark"] as const) problems.push(...(await scan(page, name, scheme, testInfo)));
    await page.emulateMedia({ colorScheme: "light" });
    await shoot(page, `${name}-1280-light`, testInfo);
  }
  expect(problems, problems.join("\n")).toEqual([]);
});

test("operations pages at 1280 px and 390 px, light and dark (screenshots)", async ({ page }, testInfo) => {
  test.setTimeout(180_000);
  await signIn(page, demoState().admin);
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
    for (const path of OPS_PAGES) {
      await page.goto(path);
      for (const scheme of ["light", "dark"] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        await page.waitForLoadState("networkidle").catch(() => undefined);
        // Nothing wider than the screen: tables scroll inside their own box.
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect.soft(overflow, `${path} at ${width}px overflows by ${overflow}px`).toBeLessThanOrEqual(1);
        await shoot(page, `ops${path.replace(/[/?=&]+/g, "-")}-${width}-${scheme}`, testInfo);
      }
    }
  }
});

test("the operations pages are usable with the keyboard alone", async ({ page }) => {
  await signIn(page, demoState().admin);
  await page.goto("/sync");
  // Tab to the Sync now button without a mouse.
  let reached = false;
  for (let i = 0; i < 60 && !reached; i++) {
    await page.keyboard.press("Tab");
    reached = await page.evaluate(() => document.activeElement?.getAttribute("data-testid") === "sync-now");
  }
  expect(reached).toBe(true);
  await page.goto("/settings/apps");
  for (let i = 0; i < 60; i++) {
    await page.keyboard.press("Tab");
    if (await page.evaluate(() => document.activeElement?.textContent === "Copy")) break;
  }
  await expect(page.locator(":focus")).toHaveText("Copy");
});
