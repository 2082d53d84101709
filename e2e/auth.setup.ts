/** Signs in once as the demo admin and the demo viewer; specs reuse the saved sessions. */
import { expect, test as setup } from "@playwright/test";
import { existsSync } from "node:fs";
import path from "node:path";
import { E2E_DIR, demoState, signIn } from "./fixture";
import { ADMIN_STATE, VIEWER_STATE } from "./storage";

setup.beforeAll(async () => {
  // The demo answers health before it has replayed its webhooks and written its state.
  await expect.poll(() => existsSync(path.join(E2E_DIR, "demo-state.json")), { timeout: 90_000 }).toBe(true);
});

setup("sign in as admin", async ({ page }) => {
  await signIn(page, demoState().admin);
  await page.context().storageState({ path: ADMIN_STATE });
});

setup("sign in as viewer", async ({ page }) => {
  await signIn(page, demoState().viewer);
  await page.context().storageState({ path: VIEWER_STATE });
});
