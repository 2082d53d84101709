import { describe, expect, it } from "vitest";
import { formatHms, generateAppCalls, generateCanonicalCalls } from "./generator";
import { NASTY_UIDS } from "./population";
import { canonicalFromWire, serializeServed, serializeWire, toWire } from "./quirks";
import type { CallRecord } from "./types";

const NOW = 1_780_000_000;
const params = { appId: "demo-sales", seed: 42, count: 2000, now: NOW, months: 6 };

describe("generator", () => {
  const calls: CallRecord[] = generateCanonicalCalls(params);

  it("is deterministic from the seed and differs across seeds and apps", () => {
    expect(JSON.stringify(generateAppCalls(params))).toBe(JSON.stringify(generateAppCalls(params)));
    expect(generateAppCalls({ ...params, seed: 43 })[5].sessionId).not.toBe(generateAppCalls(params)[5].sessionId);
    expect(generateAppCalls({ ...params, appId: "demo-support" })[5].sessionId).not.toBe(generateAppCalls(params)[5].sessionId);
  });

  it("orders newest first with unique session ids inside the window", () => {
    expect(new Set(calls.map((c) => c.sessionId)).size).toBe(calls.length);
    for (let i = 1; i < calls.length; i++) expect(calls[i - 1].initiatedAt).toBeGreaterThanOrEqual(calls[i].initiatedAt);
    expect(calls.at(-1)!.initiatedAt).toBeGreaterThanOrEqual(NOW - 6 * 30 * 86_400);
    expect(calls[0].sessionId).toMatch(/^v1\.us\.demo-sales\.\d{10}[0-9a-f]{8}$/);
  });

  it("has a realistic mix of modes, statuses, recordings and types", () => {
    const share = (f: (c: CallRecord) => boolean) => calls.filter(f).length / calls.length;
    expect(share((c) => c.mode === "call")).toBeGreaterThan(0.5);
    expect(share((c) => c.mode === "meet")).toBeGreaterThan(0.2);
    expect(share((c) => c.mode === "presenter")).toBeGreaterThan(0.05);
    expect(share((c) => c.hasRecording)).toBeGreaterThan(0.15);
    expect(share((c) => c.hasRecording)).toBeLessThan(0.35);
    expect(share((c) => c.status === "ended")).toBeGreaterThan(0.7);
    for (const s of ["unanswered", "rejected", "ongoing"]) expect(calls.some((c) => c.status === s)).toBe(true);
    // Ongoing calls are the most recent ones and have no endedAt.
    const ongoing = calls.filter((c) => c.status === "ongoing");
    expect(calls.slice(0, ongoing.length).every((c) => c.status === "ongoing")).toBe(true);
    expect(ongoing.every((c) => !("endedAt" in c) && c.startedAt !== undefined)).toBe(true);
    // Office hours dominate.
    const hours = calls.map((c) => new Date(c.initiatedAt * 1000).getUTCHours());
    expect(new Set(hours).size).toBeGreaterThan(12);
  });

  it("follows the participant rules of the seed", () => {
    for (const c of calls) {
      expect(c.receiverType).toBe(c.mode === "call" ? "user" : "group");
      const joined = c.participants.filter((p) => p.isJoined);
      expect(c.totalParticipants).toBe(joined.length);
      for (const p of c.participants) {
        if (!p.isJoined) {
          for (const k of ["deviceId", "joinedAt", "leftAt", "mid"]) expect(p).not.toHaveProperty(k);
        } else expect(typeof p.deviceId).toBe("string");
      }
      const audio = c.participants.reduce((s, p) => s + p.totalAudioMinutes, 0);
      const video = c.participants.reduce((s, p) => s + p.totalVideoMinutes, 0);
      expect(Math.abs(audio - c.totalAudioMinutes)).toBeLessThan(0.001 * (c.participants.length + 1));
      expect(Math.abs(video - c.totalVideoMinutes)).toBeLessThan(0.001 * (c.participants.length + 1));
      if (c.type === "audio") expect(c.totalVideoMinutes).toBe(0);
      expect(c.totalDuration).toMatch(/^\d{2,}:\d{2}:\d{2}$/);
      if (c.status === "unanswered" || c.status === "rejected") {
        expect(c).not.toHaveProperty("startedAt");
        expect(c.totalParticipants).toBe(0);
      }
      if (c.status === "ended" && c.startedAt !== undefined && c.endedAt !== undefined) {
        expect(c.totalDurationInMinutes).toBeCloseTo((c.endedAt - c.startedAt) / 60, 2);
      }
    }
    const meets = calls.filter((c) => c.mode === "meet" && c.status === "ended");
    expect(Math.max(...meets.map((c) => new Set(c.participants.filter((p) => p.isJoined).map((p) => p.uid)).size))).toBeLessThanOrEqual(12);
    expect(Math.min(...meets.map((c) => c.totalParticipants))).toBeGreaterThanOrEqual(3);
  });

  it("includes nasty uids, a uid twice in one call, and a call longer than 24 h", () => {
    const uids = new Set(calls.flatMap((c) => c.participants.map((p) => p.uid)));
    expect(NASTY_UIDS.filter((u) => uids.has(u)).length).toBeGreaterThan(8);
    expect(calls.some((c) => new Set(c.participants.map((p) => p.uid)).size < c.participants.length)).toBe(true);
    expect(calls.some((c) => Number(c.totalDuration.split(":")[0]) >= 24)).toBe(true);
    expect(formatHms(26 * 3600 + 189)).toBe("26:03:09");
  });

  it("applies wire quirks to a deterministic subset and undoes them", () => {
    const wire = generateAppCalls(params);
    expect(wire.some((w) => typeof w.initiatedAt === "string")).toBe(true);
    expect(wire.some((w) => "region" in w && "tags" in w)).toBe(true);
    const texts = calls.map((c) => serializeServed(c));
    expect(texts.some((t) => /"initiatedAt":\d{10}\.0[,}]/.test(t))).toBe(true);
    for (let i = 0; i < calls.length; i++) {
      expect(texts[i]).toBe(serializeWire(toWire(calls[i])));
      expect(JSON.parse(texts[i])).toEqual(JSON.parse(JSON.stringify(wire[i])));
      expect(canonicalFromWire(JSON.parse(texts[i]))).toEqual(calls[i]);
    }
  });
});
