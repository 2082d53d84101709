import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAdminClient } from "./admin-client";
import { startEmulator, type RunningEmulator } from "./server";

/**
 * `prerender` (used by the sync benchmark) must not change a byte of what the emulator
 * serves: not for plain records, not with the invalid-records quirk, not after calls
 * changed or arrived through the admin controls.
 */
const NOW = 1_780_000_000;
const spec = { seed: 5, now: NOW, months: 2, maxMeetingSize: 4, apps: [{ appId: "pre", count: 900 }] };
let plain: RunningEmulator;
let pre: RunningEmulator;

beforeAll(async () => {
  [plain, pre] = await Promise.all([startEmulator(spec), startEmulator({ ...spec, prerender: true })]);
});
afterAll(async () => {
  await Promise.all([plain.close(), pre.close()]);
});

async function pages(emu: RunningEmulator, query: string): Promise<string[]> {
  const out: string[] = [];
  for (let page = 1; page <= 4; page++) {
    const res = await fetch(`${emu.apps[0].callsUrl}/calls?${query}page=${page}&perPage=300`, { headers: { apikey: emu.apps[0].apiKey } });
    expect(res.status).toBe(200);
    out.push(await res.text());
  }
  return out;
}

async function both(change: (emu: RunningEmulator) => Promise<unknown>): Promise<void> {
  await change(plain);
  await change(pre);
}

describe("emulator prerender", () => {
  it("serves the same bytes as rendering on demand", async () => {
    const a = await pages(plain, "");
    expect(a.join("").length).toBeGreaterThan(100_000);
    expect(await pages(pre, "")).toEqual(a);
    expect(await pages(pre, "type=video&")).toEqual(await pages(plain, "type=video&"));
  });

  it("still serves invalid records and changed or new calls as they are now", async () => {
    const before = await pages(pre, "");
    await both((e) => createAdminClient(e.url).setQuirks({ invalidRecords: true }));
    await both((e) => createAdminClient(e.url).advance({ appId: "pre", seconds: 600, newCalls: 7, addRecordings: 5 } as never));
    const a = await pages(plain, "");
    expect(a[0]).toContain('"participants":"'); // an invalid record made it into the first page
    expect(a).not.toEqual(before);
    expect(await pages(pre, "")).toEqual(a);
  });
});
