import { afterEach, describe, expect, it } from "vitest";
import { FaultInjector } from "./faults";
import { startEmulator, type RunningEmulator } from "./server";

const NOW = 1_780_000_000;
let emu: RunningEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

async function start(faults: ConstructorParameters<typeof FaultInjector>[0]) {
  emu = await startEmulator({ seed: 3, now: NOW, apps: [{ appId: "a", count: 300 }], faults });
  const app = emu.apps[0];
  return (path = "/calls", timeoutMs = 5000) => fetch(`${app.callsUrl}${path}`, { headers: { apikey: app.apiKey }, signal: AbortSignal.timeout(timeoutMs) });
}

describe("faults", () => {
  it("answers 429 with Retry-After, X-Rate-Limit-Reset and the error body on every Nth request", async () => {
    const get = await start({ rules: [{ kind: "429", route: "list", everyNth: 2 }] });
    expect((await get()).status).toBe(200);
    const r = await get();
    expect(r.status).toBe(429);
    expect(r.headers.get("retry-after")).toBe("1");
    expect(Number(r.headers.get("x-rate-limit-reset"))).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000));
    expect(await r.json()).toMatchObject({ error: { code: "ERR_TOO_MANY_REQUESTS" } });
    expect((await get()).status).toBe(200);
  });

  it("serves 500, 502 and 503 with the error body, only on the targeted route", async () => {
    const get = await start({ rules: [{ kind: "500", route: "list", firstN: 1 }, { kind: "502", route: "list", firstN: 2 }, { kind: "503", route: "get", rate: 1 }] });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await get()).status);
    expect(statuses).toEqual([500, 502, 200]);
    const one = await get("/calls/v1.us.a.1700000000deadbeef");
    expect(one.status).toBe(503);
    expect(await one.json()).toMatchObject({ error: { code: "ERR_SERVICE_UNAVAILABLE", message: expect.any(String), devMessage: expect.any(String) } });
  });

  it("truncates a body, resets a connection, and hangs until the client gives up", async () => {
    const get = await start({ rules: [{ kind: "truncate", firstN: 1 }, { kind: "reset", everyNth: 2, times: 1 }, { kind: "hang", everyNth: 3, times: 1 }] });
    await expect(get("/calls?perPage=200").then((r) => r.json())).rejects.toThrow();
    await expect(get()).rejects.toThrow();
    const started = Date.now();
    await expect(get("/calls", 300)).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(3000);
    expect((await get()).status).toBe(200);
    // A hung socket must not keep close() waiting.
    const closing = Date.now();
    await emu!.close();
    expect(Date.now() - closing).toBeLessThan(2000);
  });

  it("fails every request after the first N (an upstream that goes down mid-run)", async () => {
    const get = await start({ rules: [{ kind: "503", route: "list", afterN: 2 }] });
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await get()).status);
    expect(statuses).toEqual([200, 200, 503, 503, 503]);
  });

  it("serves a list that never converges: every page full, total_pages always page + 5", async () => {
    const get = await start({});
    const page = async (p: number) => (await (await get(`/calls?perPage=100&page=${p}`)).json()) as { data: Array<{ sessionId: string }>; meta: { pagination: { total_pages: number; total: number } } };
    emu!.state.quirks.nonConverging = "growing";
    const seen = new Set<string>();
    for (const p of [1, 3, 4, 9]) {
      const r = await page(p);
      expect(r.data).toHaveLength(100);
      expect(r.meta.pagination).toMatchObject({ total_pages: p + 5, total: (p + 5) * 100 });
      for (const c of r.data) seen.add(c.sessionId);
    }
    expect(seen.size).toBe(400); // past the app's 300 calls, new sessionIds on every page
    emu!.state.quirks.nonConverging = "repeating";
    expect((await page(4)).data.map((c) => c.sessionId)).toEqual((await page(1)).data.map((c) => c.sessionId));
    expect((await page(5)).meta.pagination.total_pages).toBe(10);
  });

  it("enforces a real per-minute rate limit", async () => {
    const get = await start({ rateLimitPerMinute: 3 });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await get()).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const r = await get();
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(r.headers.get("x-rate-limit-reset")).toMatch(/^\d{10}$/);
  });

  it("is reproducible: the same seed fires on the same requests", () => {
    const run = () => {
      const f = new FaultInjector({ seed: 9, rules: [{ kind: "503", rate: 0.3 }] });
      return Array.from({ length: 50 }, () => f.decide("list", "a") ?? "-").join("");
    };
    expect(run()).toBe(run());
    const fired = run().replace(/-/g, "").length / 3;
    expect(fired).toBeGreaterThan(5);
    expect(fired).toBeLessThan(30);
  });

  it("can be changed at runtime through the admin API and counts what fired", async () => {
    const get = await start({});
    await fetch(`${emu!.url}/__emulator/faults`, { method: "PUT", body: JSON.stringify({ rules: [{ kind: "502", route: "list", firstN: 1 }] }) });
    expect((await get()).status).toBe(502);
    expect((await get()).status).toBe(200);
    const snap = (await (await fetch(`${emu!.url}/__emulator/faults`)).json()) as { fired: Record<string, number> };
    expect(snap.fired["502"]).toBe(1);
    const bad = await fetch(`${emu!.url}/__emulator/faults`, { method: "PUT", body: JSON.stringify({ rules: [{ kind: "418" }] }) });
    expect(bad.status).toBe(400);
  });
});
