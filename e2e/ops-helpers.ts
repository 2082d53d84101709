/**
 * Helpers of the operations specs (live, events, sync, settings): webhook deliveries
 * sent to the e2e server exactly as the platform would, and a page cookie for API calls.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import type { Page } from "@playwright/test";
import { sendDeliveries, type Delivery } from "@/lib/emulator/webhooks";
import type { CallRecord } from "@/lib/emulator/types";
import { demoState, E2E_DIR } from "./fixture";

export function webhookPassword(): string {
  return readFileSync(path.join(E2E_DIR, "webhook-password"), "utf8").trim();
}

/** POSTs deliveries to /api/webhooks/{appId} of the e2e server with the demo's Basic credentials. */
export async function deliver(appId: string, deliveries: readonly Delivery[], credentials?: { username: string; password: string }) {
  const state = demoState();
  return sendDeliveries(`${state.url}/api/webhooks/${encodeURIComponent(appId)}`, deliveries, {
    concurrency: 1,
    basicAuth: credentials ?? { username: state.webhook.username, password: webhookPassword() },
  });
}

/** A call going on now, with two people in it (epoch seconds). */
export function liveCall(sessionId: string, names: [string, string], mode: "call" | "meeting" = "call"): CallRecord {
  const now = Math.floor(Date.now() / 1000);
  const [a, b] = names;
  const participant = (uid: string, joinedAt: number) => ({
    uid, state: "ongoing", isJoined: true, totalAudioMinutes: 0, totalVideoMinutes: 0, totalDuration: 0, deviceId: `dev-${uid}`, joinedAt, mid: `m-${uid}`,
  });
  return {
    sessionId, mid: `mid-${sessionId}`, type: "video", mode: mode === "call" ? "call" : "meet", status: "ongoing",
    initiator: a, receiver: b, receiverType: "user", initiatedAt: now - 20, startedAt: now - 15,
    hasRecording: false, totalAudioMinutes: 0, totalVideoMinutes: 0, totalDurationInMinutes: 0, totalDuration: "00:00:00", totalParticipants: 2,
    participants: [participant(a, now - 15), participant(b, now - 10)],
  } as CallRecord;
}

export async function cookieHeader(page: Page): Promise<string> {
  return (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join("; ");
}
