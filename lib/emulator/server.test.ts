import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAdminClient } from "./admin-client";
import { generateCanonicalCalls } from "./generator";
import { startEmulator, type RunningEmulator } from "./server";
import type { CallRecord, JsonObject } from "./types";

const NOW = 1_780_000_000;
let emu: RunningEmulator;
let base: string;
let key: string;
const expected: CallRecord[] = generateCanonicalCalls({ appId: "demo-sales", seed: 7, count: 700, now: NOW, months: 3 });

type Page = { data: JsonObject[]; meta: { pagination: { total: number; count: number; per_page: number; current_page: number; total_pages: number } } };

async function get(path: string, headers: Record<string, string> = { apikey: key }): Promise<{ status: number; body: JsonObject & Page; headers: Headers }> {
  const res = await fetch(`${base}${path}`, { headers });
  return { status: res.status, body: (await res.json()) as JsonObject & Page, headers: res.headers };
}

async function all(query: string, headers?: Record<string, string>): Promise<string[]> {
  const ids: string[] = [];
  for (let page = 1; page < 100; page++) {
    const r = await get(`/calls?${query}&page=${page}&perPage=200`, headers);
    expect(r.status).toBe(200);
    ids.push(...r.body.data.map((c) => String(c.sessionId)));
    if (page >= r.body.meta.pagination.total_pages) break;
  }
  return ids;
}

const ids = (f: (c: CallRecord) => boolean) => expected.filter(f).map((c) => c.sessionId);

beforeAll(async () => {
  emu = await startEmulator({ seed: 7, now: NOW, months: 3, apps: [{ appId: "demo-sales", count: 700 }, { appId: "tiny", count: 0, region: "eu" }] });
  base = emu.apps[0].callsUrl;
  key = emu.apps[0].apiKey;
});
afterAll(async () => emu.close());

describe("calls API", () => {
  it("rejects a missing or wrong apikey and an unknown app with the platform's error body", async () => {
    for (const headers of [{}, { apikey: "nope" }, { apikey: emu.apps[1].apiKey }] as Record<string, string>[]) {
      const r = await get("/calls", headers);
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ error: { code: "AUTH_ERR_APIKEY_NOT_FOUND", message: expect.any(String), devMessage: expect.any(String) } });
    }
    const r = await fetch(`${emu.url}/ghost/v3/calls`, { headers: { apikey: key } });
    expect(r.status).toBe(404);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe("ERR_APP_NOT_FOUND");
  });

  it("paginates newest first with the seed's meta, clamps perPage and handles past-the-end pages", async () => {
    const first = await get("/calls");
    expect(first.body.meta.pagination).toEqual({ total: 700, count: 100, per_page: 100, current_page: 1, total_pages: 7 });
    expect(await all("")).toEqual(expected.map((c) => c.sessionId));
    const past = await get("/calls?page=9&perPage=100");
    expect(past.body.data).toEqual([]);
    expect(past.body.meta.pagination).toEqual({ total: 700, count: 0, per_page: 100, current_page: 9, total_pages: 7 });
    expect((await get("/calls?perPage=5000")).body.meta.pagination.per_page).toBe(1000);
    for (const bad of ["perPage=0", "page=0", "page=abc", "perPage=1.5"]) expect((await get(`/calls?${bad}`)).status).toBe(400);
    const empty = await fetch(`${emu.apps[1].callsUrl}/calls`, { headers: { apikey: emu.apps[1].apiKey } });
    expect(((await empty.json()) as Page).meta.pagination).toMatchObject({ total: 0, count: 0, total_pages: 0 });
  });

  it("applies each of the nine filters exactly", async () => {
    const ended = expected.find((c) => c.status === "ended" && c.mode === "meet")!;
    expect(await all("type=video")).toEqual(ids((c) => c.type === "video"));
    expect(await all("mode=presenter")).toEqual(ids((c) => c.mode === "presenter"));
    expect(await all("status=rejected")).toEqual(ids((c) => c.status === "rejected"));
    expect(await all("status=ongoing")).toEqual(ids((c) => c.status === "ongoing"));
    expect(await all("receiverType=group")).toEqual(ids((c) => c.receiverType === "group"));
    expect(await all("participantsCount=2")).toEqual(ids((c) => c.totalParticipants === 2));
    expect(await all(`startedAt=${ended.startedAt}`)).toEqual(ids((c) => c.startedAt === ended.startedAt));
    expect(await all(`endedAt=${ended.endedAt}`)).toEqual(ids((c) => c.endedAt === ended.endedAt));
    expect(await all("hasRecording=true")).toEqual(ids((c) => c.hasRecording));
    expect(await all("hasRecording=1")).toEqual(ids((c) => c.hasRecording));
    expect(await all("hasRecording=0")).toEqual(ids((c) => !c.hasRecording));
    for (const uid of ["a,b", "line\nbreak", "=cmd|' /C calc'!A0", "zoë"]) {
      const want = ids((c) => c.initiator === uid || c.receiver === uid || c.participants.some((p) => p.uid === uid));
      expect(want.length).toBeGreaterThan(0);
      expect(await all(`uid=${encodeURIComponent(uid)}`)).toEqual(want);
    }
    expect(await all("type=audio&mode=call&status=ended")).toEqual(ids((c) => c.type === "audio" && c.mode === "call" && c.status === "ended"));
    expect(await all("uid=nobody-here")).toEqual([]);
  });

  it("answers 400 with the error body for invalid filter values", async () => {
    for (const bad of ["type=fax", "mode=x", "status=done", "receiverType=x", "startedAt=abc", "endedAt=-1", "participantsCount=two", "hasRecording=yes", "uid="]) {
      const r = await get(`/calls?${bad}`);
      expect(r.status, bad).toBe(400);
      expect(r.body.error).toMatchObject({ code: "ERR_VALIDATION", message: expect.any(String), devMessage: expect.any(String) });
    }
  });

  it("serves one call by sessionId and 404 for an unknown one", async () => {
    const c = expected[10];
    const r = await get(`/calls/${encodeURIComponent(c.sessionId)}`);
    expect(r.status).toBe(200);
    expect((r.body.data as unknown as JsonObject).sessionId).toBe(c.sessionId);
    const missing = await get(`/calls/v1.us.demo-sales.1700000000deadbeef`);
    expect(missing.status).toBe(404);
    expect((missing.body.error as JsonObject).code).toBe("ERR_CALL_NOT_FOUND");
  });

  it("restricts the list to the onBehalfOf user's calls and rejects an unknown uid", async () => {
    const uid = expected[3].initiator;
    expect(await all("", { apikey: key, onBehalfOf: uid })).toEqual(ids((c) => c.initiator === uid || c.receiver === uid || c.participants.some((p) => p.uid === uid)));
    expect((await get("/calls", { apikey: key, onBehalfOf: "ghost-user" })).status).toBe(404);
  });
});

describe("management API", () => {
  const post = (headers: Record<string, string>, body: unknown) => fetch(emu.management.url + "/apps", { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

  it("checks key/secret and body, then creates an empty app", async () => {
    const creds = { key: emu.management.key, secret: emu.management.secret };
    expect((await post({ key: "x", secret: creds.secret }, { name: "a", version: "1", region: "us" })).status).toBe(401);
    expect((await post(creds, { name: "a", version: "1", region: "mars" })).status).toBe(400);
    expect((await post(creds, { version: "1", region: "us" })).status).toBe(400);
    const r = await post(creds, { name: "Acme Corp", version: "v3", region: "eu" });
    expect(r.status).toBe(200);
    const { data } = (await r.json()) as { data: { appId: string; apiKey: string; region: string; name: string; version: string; createdAt: number } };
    expect(data).toMatchObject({ name: "Acme Corp", region: "eu", version: "v3" });
    const list = await fetch(`${emu.url}/${data.appId}/v3/calls`, { headers: { apikey: data.apiKey } });
    expect(((await list.json()) as Page).meta.pagination.total).toBe(0);
  });
});

describe("quirks and admin controls", () => {
  const admin = () => createAdminClient(emu.url);

  it("ignorePerPage, order and invalidRecords change what the list serves", async () => {
    await admin().setQuirks({ ignorePerPage: 25 });
    const r = await get("/calls?perPage=200");
    expect(r.body.meta.pagination).toMatchObject({ per_page: 25, count: 25, total_pages: 28 });
    await admin().setQuirks({ ignorePerPage: 0, order: "oldest" });
    expect((await get("/calls?perPage=5")).body.data.map((c) => c.sessionId)).toEqual(expected.slice(-5).reverse().map((c) => c.sessionId));
    await admin().setQuirks({ order: "shuffled" });
    const shuffled = (await get("/calls?perPage=50")).body.data.map((c) => String(c.sessionId));
    expect(shuffled).not.toEqual(expected.slice(0, 50).map((c) => c.sessionId));
    expect([...shuffled].sort()).toEqual(expected.slice(0, 50).map((c) => c.sessionId).sort());
    await admin().setQuirks({ order: "newest", invalidRecords: true });
    const truth = await admin().truth("demo-sales");
    expect(truth).toHaveLength(700);
    expect(truth.filter((c) => !("sessionId" in c)).length).toBeGreaterThanOrEqual(1);
    expect(truth.some((c) => typeof c.type === "object")).toBe(true);
    expect(truth.some((c) => typeof c.participants === "string")).toBe(true);
    await admin().setQuirks({ invalidRecords: false });
  });

  it("truth equals the list; advance ends ongoing calls, adds new ones on top and records", async () => {
    const truth = await admin().truth("demo-sales");
    expect(truth.map((c) => c.sessionId)).toEqual(expected.map((c) => c.sessionId));
    const res = (await admin().advance({ appId: "demo-sales", seconds: 3600, newCalls: 5, addRecordings: 2 }))["demo-sales"];
    expect(res.ended.length).toBe(expected.filter((c) => c.status === "ongoing").length);
    expect(res.added).toHaveLength(5);
    expect(res.recorded).toHaveLength(2);
    const after = await all("");
    expect(after.slice(0, 5)).toEqual([...res.added].reverse());
    expect(after.length).toBe(705);
    const endedCall = (await admin().call("demo-sales", res.ended[0])).canonical;
    expect(endedCall.status).toBe("ended");
    expect(endedCall.participants.every((p) => !p.isJoined || p.leftAt !== undefined)).toBe(true);
    // Only newly arrived calls can still be ongoing.
    expect((await all("status=ongoing")).every((id) => res.added.includes(id))).toBe(true);
    const patched = await admin().patchCall("demo-sales", expected[300].sessionId, { hasRecording: !expected[300].hasRecording });
    expect(patched.canonical.hasRecording).toBe(!expected[300].hasRecording);
    await admin().reset();
    expect((await admin().truth("demo-sales")).map((c) => c.sessionId)).toEqual(expected.map((c) => c.sessionId));
  });
});
