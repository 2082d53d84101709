import { hash, verify } from "@node-rs/argon2";

/**
 * Passwords: argon2id (the library's default algorithm) with its default cost
 * (19 MiB, 2 passes): about 30–60 ms here, slow enough for offline guessing, fast
 * enough for a sign-in.
 */
export const MIN_PASSWORD_LENGTH = 8;
export const MAX_PASSWORD_LENGTH = 256;

export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

let dummyHash: Promise<string> | undefined;

/**
 * Spends the time of one verification when the account does not exist, so the
 * answer's timing does not tell which emails are registered.
 */
export async function burnVerification(password: string): Promise<void> {
  dummyHash ??= hash("callboard-timing-equaliser");
  await verifyPassword(await dummyHash, password);
}
