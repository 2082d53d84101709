import { execFile } from "node:child_process";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * `npm run sync` as a person runs it (a real process on its own SQLite file) against
 * hostile upstreams on loopback: one whose calls carry impossible minutes, one that
 * redirects to another origin (issue 30, items 1 and 2).
 */
process.env.AUTH_SECRET ??= "integration-test-secret-at-least-32-characters";
const { tempDbFile } = await import("@/lib/analytics/test-fixtures");
const { openDatabase } = await import("@/db/client");
const { addApp, getAppById } = await import("@/lib/apps/registry");
const { getSyncRuns } = await import("./runs");

const API_KEY = "sk_live_cli_secret_key_0001";
const servers: Server[] = [];
async function listen(handler: (req: IncomingMessage, body: (status: number, json: unknown, headers?: Record<string, string>) => void) => void): Promise<{ origin: string; seen: IncomingMessage[] }> {
  const seen: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    seen.push(req);
    handler(req, (status, json, headers = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(json));
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const call = (sessionId: string, over: Record<string, unknown> = {}) => ({
  sessionId, type: "video", mode: "call", status: "ended", initiatedAt: 1_780_000_000, startedAt: 1_780_000_005, endedAt: 1_780_000_065,
  totalAudioMinutes: 1, totalVideoMinutes: 1, totalDurationInMinutes: 1, totalDuration: "00:01:00", totalParticipants: 1,
  participants: [{ uid: "alice", isJoined: true, totalAudioMinutes: 1, totalVideoMinutes: 1, totalDuration: 1, joinedAt: 1_780_000_005, leftAt: 1_780_000_065 }],
  ...over,
});
const CALLS = [
  call("good-1"),
  call("neg-audio", { totalAudioMinutes: -1000 }),
  call("neg-video", { totalVideoMinutes: "-250.5" }),
  call("huge", { participants: [{ uid: "bob", totalVideoMinutes: 1e300 }] }),
  call("good-2"),
];

const file = tempDbFile("sync-cli");
const db = openDatabase(file);
let trap: { origin: string; seen: IncomingMessage[] };

beforeAll(async () => {
  const upstream = await listen((_req, send) => send(200, { data: CALLS, meta: { pagination: { total: CALLS.length, count: CALLS.length, per_page: 1000, current_page: 1, total_pages: 1 } } }));
  trap = await listen((_req, send) => send(200, { data: [], meta: {} }));
  const moved = await listen((_req, send) => send(302, {}, { location: `${trap.origin}/stolen/v3/calls` }));
  await addApp(db, { appId: "odd", name: "Odd", region: "eu", apiKey: API_KEY, callsUrl: `${upstream.origin}/v3` });
  await addApp(db, { appId: "moved", name: "Moved", region: "eu", apiKey: API_KEY, callsUrl: `${moved.origin}/v3` });
});
afterAll(async () => {
  db.$client.close();
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

const run = promisify(execFile);
async function sync(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ["--import", "tsx", "scripts/sync.ts", ...args], {
      env: { ...process.env, DATABASE_PATH: file, LOG_LEVEL: "silent" },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe("npm run sync against hostile upstreams", () => {
  it("refuses calls with impossible minutes, counts them in the run and prints each with its reason", async () => {
    const r = await sync("--app", "odd");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/odd\s+.*succeeded/);
    expect(r.stdout).toContain("Skipped records:");
    expect(r.stdout).toMatch(/odd neg-audio: totalAudioMinutes: expected minutes from 0 to 100,000,000, got -1000/);
    expect(r.stdout).toMatch(/odd neg-video: totalVideoMinutes: expected minutes from 0 to 100,000,000, got "-250.5"/);
    expect(r.stdout).toMatch(/odd huge: participants\.0\.totalVideoMinutes: expected minutes from 0 to 100,000,000, got 1e\+300/);
    const app = (await getAppById(db, "odd"))!;
    const [runView] = await getSyncRuns(db, [app.pk]);
    expect(runView).toMatchObject({ status: "succeeded", fetched: 5, inserted: 2, skipped: 3 });
    expect(runView.skippedRecords.map((s) => s.sessionId)).toEqual(["neg-audio", "neg-video", "huge"]);
    const stored = db.$client.prepare("SELECT session_id, total_audio_minutes, total_video_minutes FROM calls WHERE app_pk = ? ORDER BY session_id").all(app.pk);
    expect(stored).toEqual([
      { session_id: "good-1", total_audio_minutes: 1, total_video_minutes: 1 },
      { session_id: "good-2", total_audio_minutes: 1, total_video_minutes: 1 },
    ]);
  });

  it("follows no redirect: the API key never reaches the other origin, and the run fails naming the redirect", async () => {
    const r = await sync("--app", "moved");
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/moved\s+.*failed/);
    expect(r.stdout).toMatch(/HTTP 302, a redirect to http:\/\/127\.0\.0\.1:\d+ \(another origin\); redirects are not followed/);
    expect(`${r.stdout}${r.stderr}`).not.toContain(API_KEY);
    expect(trap.seen).toHaveLength(0);
  });
});
