import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliError, parseCli } from "./cli-args";
import { createAdminClient } from "./admin-client";
import { generateCallAt, generateCanonicalCalls, makeContext } from "./generator";
import { DATA_MIX_NAMES } from "./mixes";
import { startEmulator, type RunningEmulator } from "./server";
import { decodeRandomSessionId, randomSessionId } from "./session-ids";
import type { JsonObject } from "./types";

const NOW = 1_780_000_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("random session ids", () => {
  it("are UUID-shaped, as unique as time ids, out of time order, and decode to the call they were made from", () => {
    const ctx = makeContext({ appId: "rand", seed: 3, count: 100_000, now: NOW, months: 10, mix: "platform", sessionIds: "random" });
    const timeCtx = makeContext({ appId: "rand", seed: 3, count: 100_000, now: NOW, months: 10, mix: "platform" });
    const seen = new Set<string>();
    const seenTime = new Set<string>();
    const byTime: Array<{ at: number; id: string }> = [];
    for (let s = 0; s < ctx.count; s++) {
      const c = generateCallAt(ctx, s);
      expect(c.sessionId).toMatch(UUID);
      expect(decodeRandomSessionId(ctx.appSeed, c.sessionId)?.initiatedAt).toBe(c.initiatedAt);
      seen.add(c.sessionId);
      seenTime.add(generateCallAt(timeCtx, s).sessionId);
      byTime.push({ at: c.initiatedAt, id: c.sessionId });
    }
    // A few slots share their generator's 32-bit seed and repeat a whole call (the
    // emulator's own duplicates, time ids alike); every other id is distinct.
    expect(seen.size).toBe(seenTime.size);
    expect(seen.size).toBeGreaterThan(ctx.count - 20);
    // Newest first, as the list serves them: the ids go up about as often as down.
    byTime.sort((a, b) => b.at - a.at);
    let up = 0;
    for (let i = 1; i < byTime.length; i++) if (byTime[i].id > byTime[i - 1].id) up++;
    expect(up / byTime.length).toBeGreaterThan(0.45);
    expect(up / byTime.length).toBeLessThan(0.55);
  });

  it("decode only ids of their own shape and key", () => {
    const id = randomSessionId(11, 1_779_000_000, 0xdeadbeef);
    expect(decodeRandomSessionId(11, id)).toEqual({ initiatedAt: 1_779_000_000, tail: 0xdeadbeef });
    expect(decodeRandomSessionId(12, id)).not.toEqual({ initiatedAt: 1_779_000_000, tail: 0xdeadbeef });
    expect(decodeRandomSessionId(11, "v1.us.app.1779000000deadbeef")).toBeUndefined();
    expect(decodeRandomSessionId(11, id.toUpperCase())).toBeUndefined();
  });

  it("change nothing else of a record, in every mix", () => {
    for (const mix of DATA_MIX_NAMES) {
      const time = makeContext({ appId: "same", seed: 9, count: 2000, now: NOW, months: 6, mix });
      const random = makeContext({ appId: "same", seed: 9, count: 2000, now: NOW, months: 6, mix, sessionIds: "random" });
      for (let s = 0; s < 2000; s++) {
        const a = generateCallAt(time, s);
        const b = generateCallAt(random, s);
        expect(a.sessionId.startsWith(`v1.us.same.${a.initiatedAt}`)).toBe(true);
        expect(b.sessionId).not.toBe(a.sessionId);
        expect({ ...b, sessionId: a.sessionId }).toEqual(a);
      }
    }
  });

  it("are chosen by --session-ids on the command line (time by default)", () => {
    const opts = (argv: string[]) => {
      const cli = parseCli(argv);
      if (cli.help) throw new Error("help");
      return cli.options;
    };
    expect(opts([]).sessionIds).toBe("time");
    expect(opts(["--session-ids", "random"]).sessionIds).toBe("random");
    expect(() => parseCli(["--session-ids", "uuid"])).toThrow(CliError);
  });
});

describe("an emulator serving random session ids", () => {
  let emu: RunningEmulator;
  // 3,000 calls in a day and a half: dozens of calls share their initiatedAt second.
  const params = { appId: "rand-app", seed: 4, count: 3000, now: NOW, months: 0.05, mix: "platform" as const, sessionIds: "random" as const };
  const expected = generateCanonicalCalls(params);

  beforeAll(async () => {
    emu = await startEmulator({ seed: 4, now: NOW, months: 0.05, mix: "platform", sessionIds: "random", apps: [{ appId: "rand-app", count: 3000 }] });
  });
  afterAll(async () => emu.close());

  const get = async (path: string) => {
    const res = await fetch(`${emu.apps[0].callsUrl}${path}`, { headers: { apikey: emu.apps[0].apiKey } });
    return { status: res.status, body: (await res.json()) as { data: JsonObject | JsonObject[] } };
  };

  it("lists newest first, calls of the same second by sessionId descending", async () => {
    const ties = expected.filter((c, i) => i > 0 && expected[i - 1].initiatedAt === c.initiatedAt).length;
    expect(ties).toBeGreaterThan(10);
    const served: string[] = [];
    for (let page = 1; page <= 3; page++) served.push(...((await get(`/calls?perPage=1000&page=${page}`)).body.data as JsonObject[]).map((c) => String(c.sessionId)));
    expect(served).toEqual(expected.map((c) => c.sessionId));
    expect(served.every((id) => UUID.test(id))).toBe(true);
  });

  it("finds each call by its id, and calls that arrive later too", async () => {
    for (const c of expected.filter((_, i) => i % 97 === 0)) {
      const r = await get(`/calls/${c.sessionId}`);
      expect(r.status).toBe(200);
      expect((r.body.data as JsonObject).initiatedAt).toEqual(expect.anything());
      expect((r.body.data as JsonObject).sessionId).toBe(c.sessionId);
    }
    expect((await get(`/calls/${expected[0].sessionId.replace(/^./, (d) => (d === "0" ? "1" : "0"))}`)).status).toBe(404);
    const admin = createAdminClient(emu.url);
    const added = (await admin.advance({ appId: "rand-app", seconds: 600, newCalls: 5 }))["rand-app"].added;
    expect(added).toHaveLength(5);
    for (const id of added) {
      expect(id).toMatch(UUID);
      expect((await get(`/calls/${id}`)).status).toBe(200);
    }
  });
});
