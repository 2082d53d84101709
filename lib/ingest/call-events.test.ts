import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { createMemoryEngine } from "@/lib/analytics/engines/memory";
import { getCallEvents } from "./call-events";
import { callInitiated, participantJoined, participantLeft, recordingGenerated, sessionEnded, sessionStarted } from "./test-deliveries";
import { postJson, startHarness, type Harness } from "./test-harness";

/** A call's event log from deliveries sent through the real ingest, out of order, with a repeat and strangers. */
let h: Harness;
const A = { appId: "acme" };
const T = 1_767_225_600;

beforeAll(async () => {
  h = await startHarness();
  const deliveries = [
    sessionEnded(A, "log-1", T, T + 600, [{ name: "Ann", joined_at: T + 5, left_at: T + 600 }]),
    participantJoined(A, "log-1", { name: "Bob", joined_at: T + 20 }),
    callInitiated(A, "log-1", T - 10, "ann", "bob"),
    sessionStarted(A, "log-1", T),
    participantJoined(A, "log-1", { name: "Ann", joined_at: T + 5 }),
    participantLeft(A, "log-1", { name: "Bob", joined_at: T + 20, left_at: T + 300 }),
    recordingGenerated(A, "log-1", T, "612.4"),
    participantJoined(A, "log-1", { name: "Bob", joined_at: T + 20 }), // a repeat
    participantJoined(A, "log-2", { name: "Eve", joined_at: T + 1 }), // another call
    participantJoined({ appId: "open-app" }, "log-1", { name: "Mallory", joined_at: T + 2 }), // the same session id in another app
  ];
  for (const d of deliveries) expect((await postJson(h.baseUrl, String(d.appId), d)).status).toBe(200);
});
afterAll(async () => {
  await h?.close();
});

describe("a call's event log", () => {
  it("lists every event of the session once, in the order they happened, with who and what", () => {
    const log = getCallEvents(h.db, h.appPk.acme, "log-1");
    expect(log.map((e) => [e.trigger, e.at, e.who, e.detail, e.repeats])).toEqual([
      ["call_initiated", T - 10, "ann → bob", "user", 0],
      ["call_started", T, null, null, 0],
      ["recording_generated", T, null, null, 0],
      ["call_participant_joined", T + 5, "Ann", "video · web · sdk web 4", 0],
      ["call_participant_joined", T + 20, "Bob", "video · web · sdk web 4", 1],
      ["call_participant_left", T + 300, "Bob", "video", 0],
      ["call_ended", T + 600, "Ann", "1 listed at the end", 0],
    ]);
    expect(log.find((e) => e.trigger === "recording_generated")?.durationSeconds).toBe(612.4);
    expect(log.every((e) => e.outcome === "applied" && e.receivedMs > 0)).toBe(true);
  });

  it("comes with the call from the engine, and uses its index", async () => {
    h.db.run(sql`INSERT INTO calls (app_pk, session_id, status, start_at, platform_has_recording, has_recording, source, first_seen_ms, updated_ms)
      VALUES (${h.appPk.acme}, 'log-1', 'ended', ${T}, 1, 1, 'sync', 0, 0)`);
    const engine = createMemoryEngine({ db: () => h.db });
    const call = await engine.call({ app: "acme", sessionId: "log-1" }, { appPks: "all" });
    expect(call.events).toEqual(getCallEvents(h.db, h.appPk.acme, "log-1"));
    const plan = h.db.all<{ detail: string }>(sql`EXPLAIN QUERY PLAN SELECT pk FROM webhook_deliveries WHERE app_pk = 1 AND session_id = 'x' AND session_id IS NOT NULL`);
    expect(plan.map((p) => p.detail).join(" ")).toContain("webhook_deliveries_app_session_idx");
  });
});
