import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { generateCanonicalCalls } from "./generator";
import type { CallRecord, JsonObject } from "./types";
import { buildDeliveries, callEnded, callInitiated, callLifecycle, callStarted, CHAT_TRIGGERS, chatEvent, participantJoined, participantLeft, recordingGenerated, sendDeliveries, type Delivery } from "./webhooks";

const ctx = { appId: "demo-sales", region: "us" as const, webhook: "wh-1" };
const calls = generateCanonicalCalls({ appId: "demo-sales", seed: 5, count: 300, now: 1_780_000_000, months: 2 });
const ended = (mode: CallRecord["mode"]) => calls.find((c) => c.mode === mode && c.status === "ended" && c.hasRecording)!;

describe("call webhook builders", () => {
  it("builds call_* events with type call and the seed's data shapes", () => {
    const c = ended("call");
    const o = { ctx, millis: false };
    const init = callInitiated(c, o).body;
    expect(init).toMatchObject({ trigger: "call_initiated", appId: "demo-sales", region: "us", webhook: "wh-1" });
    expect(init).not.toHaveProperty("type");
    const call = init.data.call as JsonObject;
    expect(call).toMatchObject({ category: "call", data: { action: "initiated", entities: { on: { entity: { sessionid: c.sessionId, status: "initiated", initiatedAt: c.initiatedAt, joinedAt: c.initiatedAt }, entityType: "call" } } } });
    expect(Object.keys((call.data as JsonObject).entities as JsonObject).sort()).toEqual(["by", "for", "on"]);
    expect(callStarted(c, o).body).toEqual({ trigger: "call_started", data: { created_at: c.startedAt, sessionId: c.sessionId }, appId: "demo-sales", region: "us", webhook: "wh-1", type: "call" });
    const p = c.participants.find((x) => x.isJoined)!;
    const joined = participantJoined(c, p, o).body;
    expect(joined.type).toBe("call");
    expect(joined.data).toMatchObject({ occupant: { joined_at: p.joinedAt, audio_call: c.type === "audio" ? "true" : "false", name: expect.any(String) }, sessionId: c.sessionId });
    expect(Object.keys(joined.data.initial_config as JsonObject).sort()).toEqual(["call_version", "is_audio_muted", "is_audio_only", "is_video_muted", "mode", "platform", "sdk", "start_recording_on_call_start"]);
    expect((joined.data.initial_config as JsonObject).is_video_muted).toBe("false");
    expect((participantLeft(c, p, o).body.data.occupant as JsonObject).left_at).toBe(p.leftAt);
    const end = callEnded(c, o).body.data;
    expect(end).toMatchObject({ destroyed_at: c.endedAt, created_at: c.startedAt, sessionId: c.sessionId });
    expect(end.all_occupants).toHaveLength(c.totalParticipants);
  });

  it("uses meeting_* with type meet for group meetings, and milliseconds when asked", () => {
    const m = ended("meet");
    const seq = callLifecycle(m, { ctx, millis: true });
    expect(seq.map((d) => d.trigger).filter((t) => t.startsWith("call_") && t !== "call_initiated")).toEqual([]);
    expect(seq.filter((d) => d.trigger.startsWith("meeting_")).every((d) => d.body.type === "meet")).toBe(true);
    expect(seq.find((d) => d.trigger === "meeting_started")!.body.data.created_at).toBeGreaterThan(1e12);
  });

  it("builds recording_generated with string decimals and string epoch seconds", () => {
    const c = ended("presenter");
    const rec = recordingGenerated(c, { ctx }).body;
    expect(rec).not.toHaveProperty("type");
    expect(rec.data).toMatchObject({ recordingDate: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), duration: expect.stringMatching(/^\d+\.\d{2}$/), startTime: String(c.startedAt), sessionId: c.sessionId, recording_url: expect.stringMatching(/^https:\/\//) });
  });
});

describe("chat webhook builders", () => {
  it("builds every chat trigger of the seed with its data keys", () => {
    const keys: Record<string, string[]> = {
      message_sent: ["message"], message_edited: ["message"], message_deleted: ["message"], user_mentioned: ["message"],
      message_reaction_added: ["reaction"], message_reaction_removed: ["reaction"],
      user_blocked: ["by", "users"], user_unblocked: ["by", "users"],
      group_created: ["group", "members"], group_updated: ["group"], group_deleted: ["group"], group_owner_transferred: ["group"],
      group_member_joined: ["group", "members"], group_member_left: ["group", "members"],
      group_member_added: ["by", "group", "members"], group_member_kicked: ["by", "group", "members"], group_member_banned: ["by", "group", "members"],
      group_member_unbanned: ["by", "group", "members"], group_member_scope_changed: ["by", "group", "members"],
      user_connection_status_changed: ["currentConnection", "status", "timestamp", "user", "userPresenceChanged"],
      message_delivery_receipt: ["body", "messageSender", "receiver", "receiverType", "sender", "type"],
      message_read_receipt: ["body", "messageSender", "receiver", "receiverType", "sender", "type"],
    };
    expect([...CHAT_TRIGGERS].sort()).toEqual(Object.keys(keys).sort());
    for (const t of CHAT_TRIGGERS) {
      const d = chatEvent(t, { ctx, at: 1_779_000_000, users: ["alice", "bob", "zoë"] });
      expect(Object.keys(d.body.data).sort(), t).toEqual(keys[t]);
      expect(d.body).not.toHaveProperty("type");
    }
    const edited = chatEvent("message_edited", { ctx, at: 1_779_000_000, users: ["alice", "bob", "c"] }).body.data.message as JsonObject;
    expect(edited).toMatchObject({ category: "action", type: "message", data: { action: "edited", entities: { on: { entityType: "message", entity: { editedAt: 1_779_000_000 } } } } });
    const presence = chatEvent("user_connection_status_changed", { ctx, at: 1_779_000_000, users: ["a", "b", "c"] }).body.data;
    expect(presence.timestamp).toBeGreaterThan(1e12);
    expect(chatEvent("message_read_receipt", { ctx, at: 1, users: ["a", "b", "c"] }).body.data).toMatchObject({ type: "receipts", body: { action: "read" } });
    const scope = chatEvent("group_member_scope_changed", { ctx, at: 1, users: ["a", "b", "c"] }).body.data.members as Record<string, JsonObject>;
    expect(Object.values(scope)[0]).toMatchObject({ scope: "admin", oldScope: "participant" });
  });
});

describe("delivery sequences and sending", () => {
  it("adds repeats and disorder deterministically", () => {
    const some = calls.filter((c) => c.status === "ended" && c.startedAt !== undefined).slice(0, 40);
    const o = { appId: "demo-sales", region: "us" as const, seed: 1, repeatRate: 0.2, outOfOrderRate: 0.5, includeChat: true };
    const a = buildDeliveries(some, o);
    expect(JSON.stringify(a)).toBe(JSON.stringify(buildDeliveries(some, o)));
    expect(a.filter((d) => d.repeat).length).toBeGreaterThan(5);
    const endedFirst = some.filter((c) => {
      const idx = (t: string) => a.findIndex((d) => d.sessionId === c.sessionId && d.trigger.endsWith(t) && !d.repeat);
      return idx("_ended") < idx("_started");
    });
    expect(endedFirst.length).toBeGreaterThan(5);
    for (const t of CHAT_TRIGGERS) expect(a.some((d) => d.trigger === t)).toBe(true);
  });

  it("POSTs JSON with Basic auth and reports statuses", async () => {
    const seen: { auth?: string; type?: string; body: string }[] = [];
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        seen.push({ auth: req.headers.authorization, type: req.headers["content-type"], body });
        res.writeHead(seen.length === 2 ? 500 : 200).end("ok");
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/webhooks/demo-sales`;
    const deliveries: Delivery[] = callLifecycle(ended("call"), { ctx });
    const report = await sendDeliveries(url, deliveries, { concurrency: 1, basicAuth: { username: "hook", password: "p:ss" } });
    server.close();
    expect(report.sent).toBe(deliveries.length);
    expect(report.failed).toBe(1);
    expect(report.byStatus["500"]).toBe(1);
    expect(seen[0].auth).toBe(`Basic ${Buffer.from("hook:p:ss").toString("base64")}`);
    expect(seen[0].type).toBe("application/json");
    expect(JSON.parse(seen[0].body)).toEqual(deliveries[0].body);
  });
});
