import { createInterface } from "node:readline";
import { Writable } from "node:stream";

/**
 * Reads a password from the terminal without echoing it. Refuses when stdin is not a
 * terminal: a script must pass --password (a prompt would hang or read the wrong data).
 */
export async function promptPassword(question: string): Promise<string> {
  if (!process.stdin.isTTY) {
    throw new Error("--password is required when stdin is not a terminal");
  }
  let muted = false;
  const output = new Writable({
    write(chunk, _encoding, callback) {
      if (!muted) process.stdout.write(chunk);
      callback();
    },
  });
  const rl = createInterface({ input: process.stdin, output, terminal: true });
  try {
    const answer = await new Promise<string>((resolve) => {
      rl.question(question, resolve);
      muted = true;
    });
    process.stdout.write("\n");
    return answer;
  } finally {
    rl.close();
  }
}

/** Asks twice and checks both answers match. */
export async function promptNewPassword(): Promise<string> {
  const first = await promptPassword("Password: ");
  const second = await promptPassword("Repeat password: ");
  if (first !== second) throw new Error("the two passwords differ");
  return first;
}
