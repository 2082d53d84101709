import { afterEach, describe, expect, it } from "vitest";
import { generateCallAt, makeContext } from "./generator";
import { DATA_MIX_NAMES, DATA_MIXES } from "./mixes";
import { quirkOf, serializeServed } from "./quirks";
import { startEmulator, type RunningEmulator } from "./server";

const NOW = 1_780_000_000;

/** Shape of the first n records of an app generated with a mix. */
function shapeOf(mix: (typeof DATA_MIX_NAMES)[number], n = 3000) {
  const ctx = makeContext({ appId: "shape", seed: 5, count: n, now: NOW, months: 10, mix });
  let bytes = 0, rows = 0, maxRows = 0, strings = 0;
  const uids = new Set<string>();
  for (let s = 0; s < n; s++) {
    const c = generateCallAt(ctx, s);
    bytes += Buffer.byteLength(serializeServed(c, undefined, ctx.mix));
    rows += c.participants.length;
    maxRows = Math.max(maxRows, c.participants.length);
    for (const p of c.participants) uids.add(p.uid);
    if (quirkOf(c.sessionId, ctx.mix) === "strings") strings++;
  }
  return { bytesPerCall: bytes / n, rowsPerCall: rows / n, maxRows, uids: uids.size, stringShare: strings / n };
}

describe("data mixes", () => {
  it("the standard mix is the emulator's own shape (unchanged by the mixes)", () => {
    const s = shapeOf("standard");
    expect(s.rowsPerCall).toBeGreaterThan(4.3);
    expect(s.rowsPerCall).toBeLessThan(5.1);
    expect(s.stringShare).toBeGreaterThan(0.02);
    expect(s.stringShare).toBeLessThan(0.06);
  });

  it("gives each mix the shape it promises", () => {
    const platform = shapeOf("platform");
    // About 900 bytes and 3 participant rows a call, 15% of records with strings.
    expect(platform.bytesPerCall).toBeGreaterThan(800);
    expect(platform.bytesPerCall).toBeLessThan(1200);
    expect(platform.rowsPerCall).toBeGreaterThan(2.5);
    expect(platform.rowsPerCall).toBeLessThan(3.3);
    expect(platform.stringShare).toBeGreaterThan(0.12);
    expect(platform.stringShare).toBeLessThan(0.18);
    const heavy = shapeOf("heavy-users");
    expect(heavy.uids).toBeLessThanOrEqual(DATA_MIXES["heavy-users"].users[1]);
    const light = shapeOf("light-users");
    expect(light.uids).toBeGreaterThan(20 * heavy.uids);
    const big = shapeOf("big-meetings");
    expect(big.maxRows).toBeGreaterThanOrEqual(20);
    expect(big.rowsPerCall).toBeGreaterThan(10);
  });
});

describe("network switches", () => {
  let emu: RunningEmulator | undefined;
  afterEach(async () => {
    await emu?.close();
    emu = undefined;
  });

  it("--max-per-page caps pages and --latency delays every answer", async () => {
    emu = await startEmulator({ seed: 3, now: NOW, apps: [{ appId: "a", count: 250 }], quirks: { maxPerPage: 100, latencyMs: 150 } });
    const app = emu.apps[0];
    const t0 = performance.now();
    const res = await fetch(`${app.callsUrl}/calls?perPage=1000&page=3`, { headers: { apikey: app.apiKey } });
    const waited = performance.now() - t0;
    const body = (await res.json()) as { data: unknown[]; meta: { pagination: { per_page: number; total_pages: number; count: number } } };
    expect(body.meta.pagination).toMatchObject({ per_page: 100, total_pages: 3, count: 50 });
    expect(body.data).toHaveLength(50);
    // Not a speed assertion: the switch must hold the answer back at least that long.
    expect(waited).toBeGreaterThanOrEqual(145);
    // Errors are late too (a bad key is answered after the same wait).
    const t1 = performance.now();
    expect((await fetch(`${app.callsUrl}/calls`, { headers: { apikey: "wrong" } })).status).toBe(401);
    expect(performance.now() - t1).toBeGreaterThanOrEqual(145);
  });
});
