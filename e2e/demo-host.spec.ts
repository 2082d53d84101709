/**
 * Issue 29 #5: the demo prints its admin password, so it listens on loopback only unless
 * `--host` says otherwise. The e2e server is the demo launcher with no `--host`: it answers
 * on 127.0.0.1 and refuses another address of this machine (127.0.0.2 is loopback on
 * Linux too, but a socket bound to 127.0.0.1 does not accept it; a wildcard bind would).
 */
import { connect } from "node:net";
import { expect, test } from "@playwright/test";
import { ADMIN_STATE } from "./storage";

const PORT = Number(process.env.E2E_PORT ?? 3100);

function connects(host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port: PORT, timeout: 3000 });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
    socket.once("timeout", () => {
      socket.destroy();
      resolve(false);
    });
  });
}

test("the demo answers on 127.0.0.1 and nowhere else by default", async () => {
  expect(await connects("127.0.0.1")).toBe(true);
  expect(await connects("127.0.0.2")).toBe(false);
});

test.describe("the demo's own setup", () => {
  test.use({ storageState: ADMIN_STATE });

  test("is in the audit log: both apps and the viewer, by the demo", async ({ page }) => {
    await page.goto("/settings/audit");
    const byDemo = page.locator("main tr").filter({ has: page.locator("td", { hasText: /^demo$/ }) });
    await expect(byDemo.filter({ hasText: "app.create" })).toHaveCount(2);
    for (const target of ["acme-sales", "acme-support"]) await expect(byDemo.filter({ hasText: "app.create" }).filter({ hasText: target })).toHaveCount(1);
    await expect(byDemo.filter({ hasText: "user.create" }).filter({ hasText: "viewer@callboard.demo" })).toHaveCount(1);
  });
});
