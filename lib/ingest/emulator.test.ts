import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateCanonicalCalls } from "@/lib/emulator/generator";
import { buildDeliveries, sendDeliveries } from "@/lib/emulator/webhooks";
import { getEventCounts, getLiveSessions } from "./queries";
import { HOOK_PASSWORD, HOOK_USER, startHarness, type Harness } from "./test-harness";

/**
 * The emulator's webhook sender (realistic sequences of every trigger, with repeats,
 * out-of-order ends and millisecond times) against the lean ingest handler over HTTP.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const NOW = 1_780_000_000;
const calls = generateCanonicalCalls({ appId: "acme", seed: 11, count: 150, now: NOW, months: 1 });
const deliveries = buildDeliveries(calls, { appId: "acme", region: "us", seed: 4, repeatRate: 0.15, outOfOrderRate: 0.3, includeChat: true });

describe("emulated platform deliveries", () => {
  it("are all answered 200, stored once each, repeats counted once", async () => {
    const report = await sendDeliveries(`${h.baseUrl}/api/webhooks/acme`, deliveries, { concurrency: 8, basicAuth: { username: HOOK_USER, password: HOOK_PASSWORD } });
    expect(report.byStatus).toEqual({ "200": deliveries.length });
    const unique = deliveries.filter((d) => !d.repeat).length;
    const row = h.db.get<{ n: number; r: number; f: number }>(sql`SELECT count(*) n, sum(repeat_count) r, sum(outcome = 'failed') f FROM webhook_deliveries`);
    expect(row).toEqual({ n: unique, r: deliveries.length - unique, f: 0 });
    const counted = h.db.get<{ c: number }>(sql`SELECT sum(count) c FROM event_counts`);
    expect(counted?.c).toBe(unique);
  });

  it("stores one recording per recorded call", () => {
    const recorded = calls.filter((c) => c.hasRecording).length;
    expect(h.db.get<{ n: number }>(sql`SELECT count(*) n FROM recordings`)?.n).toBe(recorded);
  });

  it("ends every finished call and meeting, whatever the arrival order, and keeps ongoing ones live", async () => {
    const live = new Map(
      h.db.all<{ session_id: string; status: string; kind: string; ended_at: number | null; started_at: number | null }>(
        sql`SELECT session_id, status, kind, ended_at, started_at FROM live_sessions`,
      ).map((r) => [r.session_id, r]),
    );
    expect(live.size).toBe(calls.length);
    for (const c of calls) {
      const s = live.get(c.sessionId)!;
      expect(s.kind).toBe(c.mode === "call" ? "call" : "meet");
      if (c.status === "ongoing") {
        expect(s.status).not.toBe("ended");
      } else {
        expect(s.status).toBe("ended");
        expect(s.ended_at).toBe(c.endedAt ?? c.initiatedAt);
      }
      if (c.startedAt !== undefined) expect(s.started_at).toBe(c.startedAt);
    }
    const ongoing = calls.filter((c) => c.status === "ongoing").map((c) => c.sessionId).sort();
    const shown = (await getLiveSessions(h.db, [h.appPk.acme], { nowMs: NOW * 1000, staleAfterMs: 1e12 })).map((s) => s.sessionId).sort();
    expect(shown).toEqual(ongoing);
  });

  it("counts every chat trigger once", () => {
    const counts = getEventCounts(h.db, [h.appPk.acme], { from: 0, to: Math.floor(Date.now() / 1000) + 86_400 }).filter((c) => c.category === "chat");
    const perTrigger = new Map<string, number>();
    for (const c of counts) perTrigger.set(c.trigger, (perTrigger.get(c.trigger) ?? 0) + c.count);
    const sent = new Map<string, number>();
    for (const d of deliveries) if (!d.repeat && perTrigger.has(d.trigger)) sent.set(d.trigger, (sent.get(d.trigger) ?? 0) + 1);
    expect(perTrigger.size).toBeGreaterThanOrEqual(20);
    expect(Object.fromEntries(perTrigger)).toEqual(Object.fromEntries(sent));
  });
});
