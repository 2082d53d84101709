import { afterEach, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "@/lib/emulator/server";
import { createCallsClient, type CallsPage } from "./calls-client";
import type { FetchFn } from "./get-json";
import { RequestGate, TokenBucket } from "./rate-limit";

/**
 * Requests to the platform overlap (issue 15): pages in flight up to the concurrency,
 * yielded in order, a process-wide cap shared by apps, and a 429's Retry-After honoured
 * by every request of that app — against the emulator over real HTTP with latency.
 */

const NOW = 1_780_000_000;
let emu: RunningEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

/** fetch that records when each request starts and ends, and how many were in flight at most. */
function observedFetch() {
  const log: Array<{ url: string; start: number; end?: number; status?: number }> = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const fetchFn: FetchFn = async (input, init) => {
    const entry: { url: string; start: number; end?: number; status?: number } = { url: input, start: performance.now() };
    log.push(entry);
    maxInFlight = Math.max(maxInFlight, ++inFlight);
    try {
      const res = await fetch(input, init);
      const body = await res.arrayBuffer();
      entry.status = res.status;
      return new Response(body, { status: res.status, headers: res.headers });
    } finally {
      entry.end = performance.now();
      inFlight--;
    }
  };
  return { fetchFn, log, max: () => maxInFlight };
}

async function collect(pages: AsyncGenerator<CallsPage>): Promise<CallsPage[]> {
  const out: CallsPage[] = [];
  for await (const p of pages) out.push(p);
  return out;
}

describe("requests in flight", () => {
  it("keeps up to `prefetch` pages in flight and yields them in order", async () => {
    emu = await startEmulator({ seed: 9, now: NOW, apps: [{ appId: "a", count: 2_000 }], quirks: { latencyMs: 60, maxPerPage: 100 } });
    const app = emu.apps[0];
    const seen = observedFetch();
    const client = createCallsClient({ callsUrl: app.callsUrl, apiKey: app.apiKey, appId: "a", fetch: seen.fetchFn, bucket: new TokenBucket(1_000_000), gate: new RequestGate(6) });
    const pages = await collect(client.pages({}, { perPage: 1000, prefetch: 6 }));
    expect(pages.map((p) => p.page)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    const ids = pages.flatMap((p) => p.records.map((r) => (r as { sessionId: string }).sessionId));
    expect(new Set(ids).size).toBe(2_000);
    expect(seen.max()).toBe(6);
  });

  it("shares one cap between apps syncing at once", async () => {
    emu = await startEmulator({ seed: 9, now: NOW, apps: [{ appId: "a", count: 1_000 }, { appId: "b", count: 1_000 }], quirks: { latencyMs: 40, maxPerPage: 100 } });
    const seen = observedFetch();
    const gate = new RequestGate(4);
    const clients = emu.apps.map((app) => createCallsClient({ callsUrl: app.callsUrl, apiKey: app.apiKey, appId: app.appId, fetch: seen.fetchFn, bucket: new TokenBucket(1_000_000), gate }));
    const [a, b] = await Promise.all(clients.map((c) => collect(c.pages({}, { perPage: 100, prefetch: 4 }))));
    expect(a).toHaveLength(10);
    expect(b).toHaveLength(10);
    // Each app alone would keep 4 in flight; together they stay within the one cap.
    expect(seen.max()).toBe(4);
    expect(gate.inFlight).toBe(0);
  });

  it("waits out a 429's Retry-After for every request of the app, not only the refused one", async () => {
    emu = await startEmulator({ seed: 9, now: NOW, apps: [{ appId: "a", count: 1_000 }], quirks: { latencyMs: 20, maxPerPage: 100 }, faults: { rules: [{ kind: "429", route: "list", firstN: 1 }] } });
    const app = emu.apps[0];
    const seen = observedFetch();
    const client = createCallsClient({ callsUrl: app.callsUrl, apiKey: app.apiKey, appId: "a", fetch: seen.fetchFn, bucket: new TokenBucket(1_000_000), gate: new RequestGate(4) });
    const first = client.listCallsPage({}, 1, 100);
    // A second page is asked for while the first waits out its 429 (Retry-After: 1 s).
    await new Promise((r) => setTimeout(r, 250));
    const second = client.listCallsPage({}, 2, 100);
    const [p1, p2] = await Promise.all([first, second]);
    expect([p1.records.length, p2.records.length]).toEqual([100, 100]);
    const refusal = seen.log.find((e) => e.status === 429)!;
    const secondStart = seen.log.find((e) => e.url.includes("page=2"))!.start;
    expect(secondStart - refusal.end!).toBeGreaterThanOrEqual(900);
  });

  it("finishes a paged walk through repeated 429s, in order", async () => {
    emu = await startEmulator({ seed: 9, now: NOW, apps: [{ appId: "a", count: 1_000 }], quirks: { latencyMs: 20, maxPerPage: 100 }, faults: { rules: [{ kind: "429", route: "list", everyNth: 4 }] } });
    const app = emu.apps[0];
    const client = createCallsClient({ callsUrl: app.callsUrl, apiKey: app.apiKey, appId: "a", bucket: new TokenBucket(1_000_000), gate: new RequestGate(4), maxAttempts: 6 });
    const pages = await collect(client.pages({}, { perPage: 100, prefetch: 4 }));
    expect(pages.map((p) => p.page)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
  });
});

describe("RequestGate", () => {
  it("hands a released slot to the next waiter and forgets an aborted one", async () => {
    const gate = new RequestGate(1);
    const first = await gate.acquire();
    const controller = new AbortController();
    const aborted = gate.acquire(controller.signal);
    const second = gate.acquire();
    controller.abort(new Error("gone"));
    await expect(aborted).rejects.toThrow("gone");
    first();
    first(); // a second release is a no-op
    const release = await second;
    expect(gate.inFlight).toBe(1);
    release();
    expect(gate.inFlight).toBe(0);
  });
});
