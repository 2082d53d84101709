import { spawn } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { get as httpGet } from "node:http";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "@/db/client";
import { CALL_RAW_COLUMNS } from "@/lib/analytics/csv-columns";
import { openFixtureDb, randomCall, rng, writeCalls } from "@/lib/analytics/test-fixtures";
import { createApiToken } from "@/lib/auth/tokens";
import { createUser } from "@/lib/auth/users";
import { resetEnvForTests } from "@/lib/config/env";
import { csvContext, csvRawStream } from "@/lib/export/csv";
import { SKIP_WITHOUT_BUILD, startTestServer, type TestServer } from "./test-server";

/**
 * The calls CSV through the production server (the lean path, the analytics worker and
 * this thread writing batches side by side, written ahead and compressed in pieces:
 * docs/decisions/0029): the plain bytes are an independent rendering's (plain SQL, the
 * CSV module's cells), and the gzip answer inflates to exactly those bytes with Node's
 * zlib, GNU gzip and curl — for an export of no rows, one row and many batches.
 */
const SECRET = "csv-export-suite-secret-0123456789abcdef";
const NOW = 1_780_000_000;
const SPAN = 60 * 86_400;
/** The one call that starts in [LONE, LONE + 1). */
const LONE = NOW + 3_600;
const GZIP = "/usr/bin/gzip";
const CURL = "/usr/bin/curl";

let server: TestServer;
let file: string;
let token: string;

/** The export as plain SQL and the CSV module would write it: the list's default order (start, newest first). */
async function oracle(where: string, tz = "UTC"): Promise<Buffer> {
  const ro = openDatabase(file, { readonly: true, migrate: false });
  try {
    const rows = ro.$client
      .prepare(`SELECT a.app_id, c.session_id, c.type, c.mode, c.status, c.initiator, c.receiver, c.receiver_type, c.initiated_at, c.started_at,
          c.ended_at, c.start_at, c.has_recording, c.total_audio_minutes, c.total_video_minutes, c.total_duration_minutes,
          c.duration_seconds, c.total_participants FROM calls c JOIN apps a ON a.pk = c.app_pk ${where} ORDER BY c.start_at DESC, c.pk DESC`)
      .raw()
      .all() as unknown[][];
    return Buffer.from(await new Response(csvRawStream([rows], CALL_RAW_COLUMNS, undefined, csvContext(tz))).arrayBuffer());
  } finally {
    ro.$client.close();
  }
}

/** The body as sent (no inflating) and its content-encoding. */
function raw(p: string, encoding: string): Promise<{ encoding?: string; body: Buffer }> {
  return new Promise((resolve, reject) => {
    httpGet(`${server.base}${p}`, { headers: { authorization: `Bearer ${token}`, "accept-encoding": encoding } }, (res) => {
      const parts: Buffer[] = [];
      res.on("data", (c: Buffer) => parts.push(c));
      res.on("end", () => resolve({ encoding: res.headers["content-encoding"], body: Buffer.concat(parts) }));
      res.on("error", reject);
    }).on("error", reject);
  });
}

/** stdout of a command fed `input` (the token goes in on stdin for curl, never on its command line). */
function run(cmd: string, args: string[], input: Buffer | string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    let err = "";
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.stderr.on("data", (c: Buffer) => (err += c.toString()));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`${cmd} exited ${code}: ${err}`))));
    child.stdin.end(input);
  });
}

describe.skipIf(SKIP_WITHOUT_BUILD)("the calls CSV through the production server, plain and gzip", () => {
  beforeAll(async () => {
    process.env.AUTH_SECRET = SECRET;
    resetEnvForTests();
    const db = openFixtureDb("csv-export");
    file = db.$client.name;
    const r = rng(29);
    // 12,000 calls: seven batches (a small first one, then 2,048 rows each), written by the worker and this thread in turns.
    const calls = Array.from({ length: 12_000 }, (_, i) => randomCall(r, i, NOW - SPAN, SPAN));
    const lone = randomCall(r, 12_000, LONE, 1);
    Object.assign(lone, { status: "ended", initiatedAt: LONE, startedAt: LONE, endedAt: LONE + 90, durationSeconds: 90 });
    writeCalls(db, [...calls, lone]);
    const admin = await createUser(db, { email: "admin@callboard.test", password: "admin-password-123", role: "admin" });
    token = (await createApiToken(db, { userId: admin.id, name: "script" })).token;
    db.$client.close();
    server = await startTestServer({ env: { DATABASE_PATH: file, AUTH_SECRET: SECRET } });
    // The worker's store is loaded before the exports (a first report waits for it).
    await raw("/api/v1/usage/apps", "identity");
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    if (file) rmSync(path.dirname(file), { recursive: true, force: true });
  });

  const exports: Array<[string, string, string, number]> = [
    ["many batches", "/api/v1/calls?format=csv", "", 12_001],
    ["many batches in another zone", "/api/v1/calls?format=csv&tz=America/New_York", "", 12_001],
    ["one row", `/api/v1/calls?format=csv&from=${LONE}&to=${LONE + 1}`, `WHERE c.start_at >= ${LONE} AND c.start_at < ${LONE + 1}`, 1],
    ["no row", "/api/v1/calls?format=csv&from=1000&to=2000", "WHERE c.start_at >= 1000 AND c.start_at < 2000", 0],
  ];

  for (const [name, p, where, rows] of exports) {
    it(`sends ${name}: plain, the independent rendering's bytes; gzip, one member that inflates to them`, async () => {
      const tz = new URL(p, "http://x").searchParams.get("tz") ?? "UTC";
      const want = await oracle(where, tz);
      expect(want.toString("utf8").split("\r\n").length - 2).toBe(rows);

      const plain = await raw(p, "identity");
      expect(plain.encoding).toBeUndefined();
      expect(plain.body.equals(want)).toBe(true);

      const zipped = await raw(p, "gzip");
      expect(zipped.encoding).toBe("gzip");
      expect(gunzipSync(zipped.body).equals(want)).toBe(true);
      // One member: its trailer counts every byte.
      expect(zipped.body.readUInt32LE(zipped.body.length - 4)).toBe(want.length);
      if (existsSync(GZIP)) expect((await run(GZIP, ["-dc"], zipped.body)).equals(want)).toBe(true);
      if (existsSync(CURL)) {
        const url = `${server.base}${p}`;
        const got = await run(CURL, ["-sS", "--fail", "--compressed", "-K", "-", url], `header = "authorization: Bearer ${token}"\n`);
        expect(got.equals(want)).toBe(true);
      }
    }, 60_000);
  }
});
