/**
 * What the e2e web server (scripts/demo.ts on .tmp/e2e) set up: its sign-ins, apps and
 * the secrets it configured (for the leak checks). Read at test time: the file is
 * written once the server is up.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import type { Page } from "@playwright/test";

export interface DemoState {
  url: string;
  emulator: { url: string; apps: Array<{ appId: string; region: string; callsUrl: string }> };
  admin: { email: string; password: string };
  viewer: { email: string; password: string; apps: string[] };
  webhook: { username: string };
  knownSecrets: string[];
}

export const E2E_DIR = process.env.E2E_DIR ?? ".tmp/e2e";

export function demoState(): DemoState {
  return JSON.parse(readFileSync(path.join(E2E_DIR, "demo-state.json"), "utf8")) as DemoState;
}

/** Signs in through the sign-in page, as a person would. */
export async function signIn(page: Page, who: { email: string; password: string }): Promise<void> {
  await page.goto("/signin");
  await page.getByLabel("Email").fill(who.email);
  await page.getByLabel("Password").fill(who.password);
  await page.getByRole("button", { name: /sign in/i }).click();
  await page.waitForURL((url) => !url.pathname.startsWith("/signin"));
}
