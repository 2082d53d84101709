import { describe, expect, it } from "vitest";
import { jsonNestsDeeperThan, MAX_JSON_DEPTH } from "./json-depth";
import { bodyKey, canonicalJson } from "./keys";
import { messageSent, recordingGenerated, sessionEnded } from "./test-deliveries";
import type { Envelope } from "../platform/webhook-envelope";

const bytes = (s: string) => Buffer.from(s, "utf8");
const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

/** The recursive canonical JSON the ingest used before, kept as the oracle: stored keys must not change. */
function recursiveCanonical(v: unknown): string {
  if (v === null || typeof v !== "object") return JSON.stringify(v) ?? "null";
  if (Array.isArray(v)) return `[${v.map(recursiveCanonical).join(",")}]`;
  const o = v as Record<string, unknown>;
  const parts = Object.keys(o).sort().filter((k) => o[k] !== undefined).map((k) => `${JSON.stringify(k)}:${recursiveCanonical(o[k])}`);
  return `{${parts.join(",")}}`;
}

describe("nesting depth, measured on the bytes", () => {
  it("allows exactly the limit and refuses one more", () => {
    expect(jsonNestsDeeperThan(bytes(nested(MAX_JSON_DEPTH)))).toBe(false);
    expect(jsonNestsDeeperThan(bytes(nested(MAX_JSON_DEPTH + 1)))).toBe(true);
    expect(jsonNestsDeeperThan(bytes(`{"a":${nested(MAX_JSON_DEPTH - 1)}}`))).toBe(false);
    expect(jsonNestsDeeperThan(bytes(`{"a":{"b":${nested(MAX_JSON_DEPTH - 1)}}}`))).toBe(true);
  });

  it("counts depth, not the number of containers", () => {
    const wide = `[${Array.from({ length: 10_000 }, () => '{"a":[1,{"b":2}]}').join(",")}]`;
    expect(jsonNestsDeeperThan(bytes(wide), 4)).toBe(false);
    expect(jsonNestsDeeperThan(bytes(wide), 3)).toBe(true);
  });

  it("ignores brackets inside strings, escaped quotes included", () => {
    const text = JSON.stringify({ text: "[".repeat(500) + '\\"{{{' + "{".repeat(500), "é🙂": "]]]\"[[[" });
    expect(jsonNestsDeeperThan(bytes(text), 1)).toBe(false);
    expect(jsonNestsDeeperThan(bytes(`{"a":"\\\\","b":[[]]}`), 2)).toBe(true);
  });

  it("scans a million levels without recursion", () => {
    expect(jsonNestsDeeperThan(bytes(nested(1_000_000)))).toBe(true);
  });
});

describe("canonical JSON without recursion", () => {
  const samples: unknown[] = [
    messageSent({ appId: "acme" }, "m-1"),
    recordingGenerated({ appId: "acme" }, "s-1", 1_700_000_000),
    sessionEnded({ appId: "acme" }, "s-2", 1_700_000_000, 1_700_000_600, [{ name: "Ann", joined_at: 1_700_000_010, left_at: 1_700_000_500 }]),
    { z: [1, "2", null, true, { b: [], a: {} }, [[[]]]], a: { "ü": "\u2028", "": -0.5, e: 1e21, n: [null] }, m: undefined },
    [],
    {},
    "text",
    42,
    null,
    [undefined, { x: undefined }],
  ];

  it("writes exactly what the recursive version wrote, so stored idempotency keys still match", () => {
    for (const s of samples) expect(canonicalJson(s)).toBe(recursiveCanonical(s));
    const env = samples[0] as Envelope;
    const reordered = JSON.parse(JSON.stringify({ webhook: env.webhook, data: env.data, region: env.region, appId: env.appId, trigger: env.trigger })) as unknown;
    expect(bodyKey(env, reordered)).toBe(bodyKey(env, env));
  });

  it("handles nesting far past any stack", () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = i % 2 ? [deep] : { k: deep };
    const out = canonicalJson(deep);
    expect(out.length).toBeGreaterThan(400_000);
    expect(out.startsWith('[{"k":[{"k":')).toBe(true);
  });
});
