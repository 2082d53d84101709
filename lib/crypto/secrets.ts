import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { env } from "@/lib/config/env";

/**
 * Secrets at rest (API keys, webhook passwords, management credentials): AES-256-GCM
 * with a key derived from AUTH_SECRET by HKDF. Stored as `v1.<iv>.<tag>.<ciphertext>`
 * (base64url). Rotating AUTH_SECRET makes stored secrets unreadable: re-enter them.
 */
const VERSION = "v1";
const keyCache = new Map<string, Buffer>();

function keyFor(secret: string): Buffer {
  let key = keyCache.get(secret);
  if (!key) {
    key = Buffer.from(hkdfSync("sha256", secret, "callboard", "secrets-at-rest-v1", 32));
    keyCache.set(secret, key);
  }
  return key;
}

export function encryptSecret(plain: string, secret = env().AUTH_SECRET): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", keyFor(secret), iv);
  const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return [VERSION, iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), body.toString("base64url")].join(".");
}

export class SecretDecryptError extends Error {
  constructor() {
    super("A stored secret could not be decrypted: was AUTH_SECRET changed? Re-enter the secret.");
    this.name = "SecretDecryptError";
  }
}

export function decryptSecret(stored: string, secret = env().AUTH_SECRET): string {
  const [version, iv, tag, body] = stored.split(".");
  if (version !== VERSION || !iv || !tag || body === undefined) throw new SecretDecryptError();
  try {
    const decipher = createDecipheriv("aes-256-gcm", keyFor(secret), Buffer.from(iv, "base64url"));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8");
  } catch {
    throw new SecretDecryptError();
  }
}

/** What may be shown of a secret: its last four characters. */
export function lastFour(secret: string): string {
  return secret.length <= 4 ? "••••" : secret.slice(-4);
}
