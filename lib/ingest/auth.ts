import { createHash, timingSafeEqual } from "node:crypto";
import { decryptSecret } from "@/lib/crypto/secrets";

/**
 * HTTP Basic for webhook deliveries. The comparison is over SHA-256 digests of
 * "user:password", so both sides always have the same length and `timingSafeEqual`
 * leaks neither the password nor its length. The expected digest is cached per stored
 * ciphertext (a new password is a new ciphertext), so the secret is decrypted once.
 */
const digest = (s: string | Buffer) => createHash("sha256").update(s).digest();
const expectedCache = new Map<string, Buffer>();

export interface BasicAuthConfig {
  username: string | null;
  passwordEnc: string | null;
}

function expectedDigest(cfg: BasicAuthConfig): Buffer | null {
  if (!cfg.username || !cfg.passwordEnc) return null;
  const cacheKey = `${cfg.username}\u0000${cfg.passwordEnc}`;
  let d = expectedCache.get(cacheKey);
  if (!d) {
    d = digest(`${cfg.username}:${decryptSecret(cfg.passwordEnc)}`);
    if (expectedCache.size > 1000) expectedCache.clear();
    expectedCache.set(cacheKey, d);
  }
  return d;
}

/** The decoded "user:password" of a Basic header, or null when the header is not Basic. */
export function parseBasic(header: string | null | undefined): Buffer | null {
  if (!header) return null;
  const m = /^Basic[ ]+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
  if (!m) return null;
  const decoded = Buffer.from(m[1], "base64");
  return decoded.includes(0x3a) ? decoded : null;
}

/** True when the Authorization header carries exactly the configured credentials. */
export function checkBasicAuth(header: string | null | undefined, cfg: BasicAuthConfig): boolean {
  const expected = expectedDigest(cfg); // may throw SecretDecryptError: a server-side fault
  const given = parseBasic(header);
  // Compare even when nothing usable was sent, so every refusal costs the same.
  const ok = timingSafeEqual(digest(given ?? ""), expected ?? digest("\u0000"));
  return ok && given !== null && expected !== null;
}

export function basicAuthHeader(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, "utf8").toString("base64")}`;
}
