/**
 * What a hostile page or upstream can make a signed-in browser do (issue 12, items 4
 * and 5), in a real Chromium against the production build:
 *
 * - a page on a sibling subdomain (same site, so the SameSite=Lax cookie rides along)
 *   auto-submits a `text/plain` form that is JSON to /api/v1/users, and replays a
 *   server action's form: both are refused 403 and change nothing;
 * - a recording stored with a `javascript:` address is never a link.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import Database from "better-sqlite3";
import { chromium, expect, test, type Browser } from "@playwright/test";
import type { WebhookEnvelope } from "@/lib/emulator/webhook-types";
import { recordingGenerated } from "@/lib/ingest/test-deliveries";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "../playwright.config";
import { demoState, E2E_DIR, signIn } from "./fixture";
import { deliver } from "./ops-helpers";

const RUN = Date.now().toString(36);

// ------------------------------------------------------------------ cross-site forms

/** Two host names of one site, both on this machine. */
const APP_HOST = "app.callboard.test";
const EVIL_HOST = "evil.callboard.test";

let browser: Browser;
let attacker: Server;
let attackerPage = "";

test.beforeAll(async () => {
  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS, "--host-resolver-rules=MAP *.callboard.test 127.0.0.1"] });
  attacker = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(attackerPage);
  });
  await new Promise<void>((resolve) => attacker.listen(0, "127.0.0.1", resolve));
});

test.afterAll(async () => {
  await browser?.close();
  await new Promise((r) => attacker?.close(r));
});

const attackerUrl = () => `http://${EVIL_HOST}:${(attacker.address() as AddressInfo).port}/`;
const appUrl = (p: string) => `http://${APP_HOST}:${new URL(demoState().url).port}${p}`;

/** A browser signed in as the demo admin at APP_HOST (its cookie is that host's). */
async function adminOnAppHost() {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(appUrl("/signin"));
  const { admin } = demoState();
  await page.getByLabel("Email").fill(admin.email);
  await page.getByLabel("Password").fill(admin.password);
  await page.getByRole("button", { name: /sign in/i }).click();
  await page.waitForURL((url) => !url.pathname.startsWith("/signin"));
  return { context, page };
}

test("a form on a sibling subdomain cannot create an admin with the admin's cookie", async () => {
  const { context, page } = await adminOnAppHost();

  const email = `cross-site-${RUN}@evil.example`;
  // The classic: a text/plain form whose body reads as JSON ({"…":"…","pad":"="}).
  const json = JSON.stringify({ email, password: "evil-password-123", role: "admin", pad: "" }).slice(0, -2);
  attackerPage = `<!doctype html><form method="POST" enctype="text/plain" action="${appUrl("/api/v1/users")}">
    <input name='${json.replace(/'/g, "&#39;")}' value='"}'></form><script>document.forms[0].submit()</script>`;
  const [response] = await Promise.all([page.waitForResponse(appUrl("/api/v1/users")), page.goto(attackerUrl())]);
  expect((await response.request().allHeaders())["cookie"] ?? "", "the cookie must ride along for this test to mean anything").toContain("authjs.session-token");
  expect(response.status()).toBe(403);
  expect(await response.json()).toMatchObject({ error: { code: "cross_site_request" } });

  // Nothing was created: the admin's own page lists every user.
  await page.goto(appUrl("/settings/users"));
  await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
  await expect(page.getByText(email)).toHaveCount(0);
  await context.close();
});

test("a server action's form replayed from a sibling subdomain is refused", async () => {
  const { context, page } = await adminOnAppHost();
  const { admin } = demoState();

  await page.goto(appUrl("/settings/tokens"));
  const form = page.getByRole("form", { name: "Create an API token" });
  await expect(form).toBeVisible();
  // What a browser without JavaScript would post: React's hidden action fields and the inputs.
  const hidden = await form.locator('input[type="hidden"]').evaluateAll((els) => els.map((e) => [(e as HTMLInputElement).name, (e as HTMLInputElement).value]));
  expect(hidden.some(([name]) => name.startsWith("$ACTION"))).toBe(true);
  const name = `cross-site ${RUN}`;
  const escape = (v: string) => v.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
  attackerPage = `<!doctype html><form method="POST" enctype="multipart/form-data" action="${appUrl("/settings/tokens")}">
    ${hidden.map(([n, v]) => `<input type="hidden" name="${escape(n)}" value="${escape(v)}">`).join("")}
    <input name="email" value="${escape(admin.email)}"><input name="name" value="${escape(name)}"></form>
    <script>document.forms[0].submit()</script>`;
  const [response] = await Promise.all([page.waitForResponse(appUrl("/settings/tokens")), page.goto(attackerUrl())]);
  expect(response.request().method()).toBe("POST");
  expect(response.status()).toBe(403);

  await page.goto(appUrl("/settings/tokens"));
  await expect(page.getByRole("form", { name: "Create an API token" })).toBeVisible();
  await expect(page.getByText(name)).toHaveCount(0);
  await context.close();
});

// ------------------------------------------------------------------ recording links

test("recording addresses that are not http(s) are refused on arrival and never shown as links", async ({ page }) => {
  const state = demoState();
  const appId = state.emulator.apps[0].appId;

  // New deliveries: refused with the reason, which the Events page lists.
  const env = recordingGenerated({ appId, region: state.emulator.apps[0].region }, `data-url-${RUN}`, 1_700_000_000) as unknown as WebhookEnvelope;
  const body = { ...env, data: { ...env.data, recording_url: "data:text/html,<script>alert(document.cookie)</script>" } };
  const report = await deliver(appId, [{ trigger: body.trigger, body, at: 1_700_000_000, repeat: false }]);
  expect(report.results.map((r) => r.status)).toEqual([422]);

  // A row stored before the ingest checked schemes, on a call the dashboard knows.
  const sqlite = new Database(path.join(E2E_DIR, "warehouse.db"));
  let call: { appPk: number; sessionId: string };
  try {
    call = sqlite.prepare("SELECT c.app_pk appPk, c.session_id sessionId FROM calls c JOIN apps a ON a.pk = c.app_pk WHERE a.app_id = ? ORDER BY c.start_at DESC LIMIT 1").get(appId) as typeof call;
    sqlite.prepare("INSERT INTO recordings (app_pk, session_id, recording_url, recording_date, duration, start_time, received_ms) VALUES (?, ?, ?, '2026-01-01', 60, ?, ?)")
      .run(call.appPk, call.sessionId, "javascript:alert(document.cookie)//.mp4", 1_900_000_000 + Math.floor(Math.random() * 1e6), Date.now());
  } finally {
    sqlite.close();
  }

  await signIn(page, state.admin);
  const unsafeLinks = () => page.locator('a[href^="javascript:" i], a[href^="data:" i], a[href*="alert(" i]');
  await page.goto(`/recordings?app=${encodeURIComponent(appId)}`);
  await expect(page.getByTestId("unsafe-recording-url").first()).toBeVisible();
  await expect(unsafeLinks()).toHaveCount(0);
  await expect(page.getByRole("link", { name: /^Open/ }).first()).toHaveAttribute("href", /^https?:\/\//);

  await page.goto(`/calls/${encodeURIComponent(call.sessionId)}?app=${encodeURIComponent(appId)}`);
  await expect(page.getByTestId("unsafe-recording-url")).toBeVisible();
  await expect(unsafeLinks()).toHaveCount(0);

  await page.goto(`/events?app=${encodeURIComponent(appId)}`);
  await expect(page.getByText(/recording_url must be an absolute http or https URL \(got data:\)/).first()).toBeVisible();
});
