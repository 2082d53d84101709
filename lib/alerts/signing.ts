/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): a receiver verifies
 * a notification with any Standard Webhooks library and the destination's `whsec_`
 * secret. The signed content is `${id}.${timestamp}.${body}`; the key is the secret's
 * base64 part, decoded.
 */
import { createHmac, randomBytes } from "node:crypto";

const PREFIX = "whsec_";

/** A new destination secret: 24 random bytes, as Standard Webhooks libraries expect them. */
export function newSigningSecret(): string {
  return PREFIX + randomBytes(24).toString("base64");
}

export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, "base64");
  const mac = createHmac("sha256", key).update(`${id}.${timestampSeconds}.${body}`).digest("base64");
  return `v1,${mac}`;
}

/** The three headers of one attempt (a retry signs again with its own timestamp). */
export function signatureHeaders(secret: string, id: string, body: string, nowMs: number): Record<string, string> {
  const timestamp = Math.floor(nowMs / 1000);
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": sign(secret, id, timestamp, body),
  };
}
