// Webhook envelope and delivery types (seed "Events": envelope and trigger table).
import type { JsonObject, Region } from "./types";

export interface WebhookEnvelope {
  trigger: string;
  data: JsonObject;
  appId: string;
  region: Region;
  webhook: string;
  /** Only on call and meeting triggers: "call" or "meet". */
  type?: "call" | "meet";
}

export interface Delivery {
  trigger: string;
  body: WebhookEnvelope;
  /** Event time (epoch seconds) used to order a delivery sequence. */
  at: number;
  sessionId?: string;
  /** True for a second copy of an earlier delivery (the platform may repeat). */
  repeat: boolean;
}

export interface EnvelopeContext {
  appId: string;
  region: Region;
  /** Identifier of the webhook that delivers (at most 50 characters). */
  webhook: string;
}

export function envelope(ctx: EnvelopeContext, trigger: string, data: JsonObject, at: number, type?: "call" | "meet", sessionId?: string): Delivery {
  const body: WebhookEnvelope = { trigger, data, appId: ctx.appId, region: ctx.region, webhook: ctx.webhook };
  if (type) body.type = type;
  return { trigger, body, at, repeat: false, ...(sessionId ? { sessionId } : {}) };
}

/** Shape of the platform's `user` object in event payloads. */
export function userObject(uid: string, name: string, at: number, extra: JsonObject = {}): JsonObject {
  return {
    uid,
    name,
    avatar: `https://avatars.example.com/${encodeURIComponent(uid)}.png`,
    status: "online",
    role: "default",
    lastActiveAt: at,
    ...extra,
  };
}

export function conversationIdOf(a: string, b: string, receiverType: "user" | "group"): string {
  if (receiverType === "group") return `group_${b}`;
  return a < b ? `${a}_user_${b}` : `${b}_user_${a}`;
}
