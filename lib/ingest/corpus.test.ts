import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { basicAuthHeader } from "./auth";
import { messageSent, recordingGenerated } from "./test-deliveries";
import { AUTH, HOOK_PASSWORD, HOOK_USER, jsonHeaders, postJson, send, startHarness, type Harness, type RawRequest } from "./test-harness";

/** Bad deliveries: each gets its 4xx and a clear message, and nothing is applied. */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const A = { appId: "acme" };
const valid = () => messageSent(A, "m-valid");
const withField = (patch: Record<string, unknown>, drop?: string) => {
  const env: Record<string, unknown> = { ...valid(), ...patch };
  if (drop) delete env[drop];
  return JSON.stringify(env);
};
const post = (body: string | Buffer, headers: Record<string, string> = jsonHeaders(), path = "/api/webhooks/acme"): RawRequest => ({ path, headers, body });

interface Case {
  name: string;
  req: RawRequest;
  status: number;
  code: string;
  /** Words the message must contain (case-insensitive). */
  says: string;
}

const big = Buffer.alloc(1024 * 1024 + 1, 0x20);
const recordingData = (patch: Record<string, unknown>, drop?: string) => {
  const env = recordingGenerated(A, "sess-r", 1_700_000_000) as { data: Record<string, unknown> };
  const data: Record<string, unknown> = { ...env.data, ...patch };
  if (drop) delete data[drop];
  return JSON.stringify({ ...env, data });
};

/** A valid envelope (or one of `trigger`) whose data holds `depth` nested containers. */
function deepIn(open: string, close: string, depth: number, inner = "", trigger = "message_sent"): string {
  const env = JSON.stringify({ ...valid(), trigger, data: { x: "__DEEP__" } });
  return env.replace('"__DEEP__"', open.repeat(depth) + inner + close.repeat(depth));
}

const cases: Case[] = [
  // Method and address
  { name: "GET instead of POST", req: { method: "GET", path: "/api/webhooks/acme", headers: { Authorization: AUTH } }, status: 405, code: "method_not_allowed", says: "POST" },
  { name: "PUT instead of POST", req: { ...post(JSON.stringify(valid())), method: "PUT" }, status: 405, code: "method_not_allowed", says: "POST" },
  { name: "DELETE instead of POST", req: { method: "DELETE", path: "/api/webhooks/acme", headers: {} }, status: 405, code: "method_not_allowed", says: "POST" },
  { name: "unknown app", req: post(JSON.stringify(messageSent({ appId: "ghost" }, "m1")), jsonHeaders(), "/api/webhooks/ghost"), status: 404, code: "not_found", says: "app id" },
  { name: "app id of another case", req: post(JSON.stringify(valid()), jsonHeaders(), "/api/webhooks/ACME"), status: 404, code: "not_found", says: "app id" },
  { name: "over-long app id", req: post(JSON.stringify(valid()), jsonHeaders(), `/api/webhooks/${"a".repeat(300)}`), status: 404, code: "not_found", says: "app id" },
  { name: "no app id", req: post(JSON.stringify(valid()), jsonHeaders(), "/api/webhooks/"), status: 404, code: "not_found", says: "/api/webhooks/{appId}" },
  { name: "path below the app", req: post(JSON.stringify(valid()), jsonHeaders(), "/api/webhooks/acme/extra"), status: 404, code: "not_found", says: "/api/webhooks/{appId}" },
  { name: "bad percent-encoding", req: post(JSON.stringify(valid()), jsonHeaders(), "/api/webhooks/%E0%A4%A"), status: 404, code: "not_found", says: "/api/webhooks/{appId}" },
  // Credentials
  { name: "no credentials", req: post(JSON.stringify(valid()), jsonHeaders(null)), status: 401, code: "unauthorized", says: "credentials" },
  { name: "wrong password", req: post(JSON.stringify(valid()), jsonHeaders(basicAuthHeader(HOOK_USER, "nope"))), status: 401, code: "unauthorized", says: "credentials" },
  { name: "wrong username", req: post(JSON.stringify(valid()), jsonHeaders(basicAuthHeader("someone", HOOK_PASSWORD))), status: 401, code: "unauthorized", says: "credentials" },
  { name: "password prefix only", req: post(JSON.stringify(valid()), jsonHeaders(basicAuthHeader(HOOK_USER, HOOK_PASSWORD.slice(0, -1)))), status: 401, code: "unauthorized", says: "credentials" },
  { name: "Bearer instead of Basic", req: post(JSON.stringify(valid()), jsonHeaders(`Bearer ${HOOK_PASSWORD}`)), status: 401, code: "unauthorized", says: "Basic" },
  { name: "Basic without a colon", req: post(JSON.stringify(valid()), jsonHeaders(`Basic ${Buffer.from("justauser").toString("base64")}`)), status: 401, code: "unauthorized", says: "credentials" },
  { name: "Basic with garbage", req: post(JSON.stringify(valid()), jsonHeaders("Basic ###")), status: 401, code: "unauthorized", says: "credentials" },
  { name: "empty Authorization", req: post(JSON.stringify(valid()), { "Content-Type": "application/json", Authorization: "" }), status: 401, code: "unauthorized", says: "credentials" },
  { name: "disabled webhook", req: post(JSON.stringify(messageSent({ appId: "off-app" }, "m1")), jsonHeaders(), "/api/webhooks/off-app"), status: 403, code: "webhook_disabled", says: "turned off" },
  // Content type and size
  { name: "no content type", req: post(JSON.stringify(valid()), { Authorization: AUTH }), status: 415, code: "unsupported_media_type", says: "application/json" },
  { name: "text/plain", req: post(JSON.stringify(valid()), { Authorization: AUTH, "Content-Type": "text/plain" }), status: 415, code: "unsupported_media_type", says: "application/json" },
  { name: "form encoded", req: post("trigger=message_sent", { Authorization: AUTH, "Content-Type": "application/x-www-form-urlencoded" }), status: 415, code: "unsupported_media_type", says: "application/json" },
  { name: "JSON in latin1", req: post(JSON.stringify(valid()), { Authorization: AUTH, "Content-Type": "application/json; charset=iso-8859-1" }), status: 415, code: "unsupported_media_type", says: "UTF-8" },
  { name: "oversized body (declared)", req: post(big), status: 413, code: "payload_too_large", says: "larger" },
  { name: "oversized body (chunked)", req: { ...post(big), chunked: true }, status: 413, code: "payload_too_large", says: "larger" },
  // Bytes and JSON
  { name: "empty body", req: post(""), status: 400, code: "invalid_json", says: "empty" },
  { name: "whitespace body", req: post("  \n "), status: 400, code: "invalid_json", says: "empty" },
  { name: "truncated JSON", req: post(JSON.stringify(valid()).slice(0, 40)), status: 400, code: "invalid_json", says: "not valid JSON" },
  { name: "not JSON at all", req: post("hello webhook"), status: 400, code: "invalid_json", says: "not valid JSON" },
  { name: "trailing garbage", req: post(`${JSON.stringify(valid())}}`), status: 400, code: "invalid_json", says: "not valid JSON" },
  { name: "invalid UTF-8", req: post(Buffer.concat([Buffer.from('{"trigger":"message_sent","x":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')])), status: 400, code: "invalid_utf8", says: "UTF-8" },
  { name: "UTF-16 body", req: post(Buffer.from(`\ufeff${JSON.stringify(valid())}`, "utf16le")), status: 400, code: "invalid_utf8", says: "UTF-8" },
  { name: "JSON array", req: post("[1,2]"), status: 400, code: "invalid_envelope", says: "JSON object" },
  { name: "JSON null", req: post("null"), status: 400, code: "invalid_envelope", says: "JSON object" },
  { name: "JSON string", req: post('"message_sent"'), status: 400, code: "invalid_envelope", says: "JSON object" },
  // Envelope fields
  { name: "trigger missing", req: post(withField({}, "trigger")), status: 400, code: "invalid_envelope", says: "trigger" },
  { name: "trigger a number", req: post(withField({ trigger: 7 })), status: 400, code: "invalid_envelope", says: "trigger" },
  { name: "trigger empty", req: post(withField({ trigger: "" })), status: 400, code: "invalid_envelope", says: "trigger" },
  { name: "data missing", req: post(withField({}, "data")), status: 400, code: "invalid_envelope", says: "data" },
  { name: "data an array", req: post(withField({ data: [1] })), status: 400, code: "invalid_envelope", says: "data" },
  { name: "data a string", req: post(withField({ data: "x" })), status: 400, code: "invalid_envelope", says: "data" },
  { name: "data null", req: post(withField({ data: null })), status: 400, code: "invalid_envelope", says: "data" },
  { name: "appId missing", req: post(withField({}, "appId")), status: 400, code: "invalid_envelope", says: "appId" },
  { name: "appId a number", req: post(withField({ appId: 42 })), status: 400, code: "invalid_envelope", says: "appId" },
  { name: "appId of another app", req: post(withField({ appId: "open-app" })), status: 400, code: "app_mismatch", says: "appId" },
  { name: "region missing", req: post(withField({}, "region")), status: 400, code: "invalid_envelope", says: "region" },
  { name: "region a boolean", req: post(withField({ region: true })), status: 400, code: "invalid_envelope", says: "region" },
  { name: "webhook missing", req: post(withField({}, "webhook")), status: 400, code: "invalid_envelope", says: "webhook" },
  { name: "webhook an object", req: post(withField({ webhook: { id: 1 } })), status: 400, code: "invalid_envelope", says: "webhook" },
  { name: "type a number", req: post(withField({ type: 1 })), status: 400, code: "invalid_envelope", says: "type" },
  // Known triggers without what they need
  { name: "recording without sessionId", req: post(recordingData({}, "sessionId")), status: 422, code: "invalid_event", says: "sessionId" },
  { name: "recording with a word for startTime", req: post(recordingData({ startTime: "yesterday" })), status: 422, code: "invalid_event", says: "startTime" },
  { name: "recording without recording_url", req: post(recordingData({}, "recording_url")), status: 422, code: "invalid_event", says: "recording_url" },
  { name: "joined without occupant", req: post(JSON.stringify({ ...valid(), trigger: "call_participant_joined", type: "call", data: { sessionId: "s1" } })), status: 422, code: "invalid_event", says: "occupant" },
  { name: "call_ended with an object sessionId", req: post(JSON.stringify({ ...valid(), trigger: "call_ended", type: "call", data: { sessionId: {}, destroyed_at: 1 } })), status: 422, code: "invalid_event", says: "sessionId" },
  { name: "call_initiated without a session", req: post(JSON.stringify({ ...valid(), trigger: "call_initiated", type: "call", data: { call: { id: "x" } } })), status: 422, code: "invalid_event", says: "sessionid" },
  // Hostile bodies: nesting that once overflowed the stack (a 500 the platform retries forever)
  { name: "arrays 5,000 deep in data", req: post(deepIn("[", "]", 5_000)), status: 422, code: "nesting_too_deep", says: "64 levels" },
  { name: "objects 50,000 deep in data", req: post(deepIn('{"x":', "}", 50_000, "1")), status: 422, code: "nesting_too_deep", says: "64 levels" },
  { name: "an unknown trigger 65 deep", req: post(deepIn("[", "]", 63, "", "poll_voted")), status: 422, code: "nesting_too_deep", says: "64 levels" },
  // Recording links that a browser would run or render
  { name: "recording_url data:", req: post(recordingData({ recording_url: "data:text/html,<script>alert(document.cookie)</script>" })), status: 422, code: "invalid_event", says: "http or https URL (got data:)" },
  { name: "recording_url javascript:", req: post(recordingData({ recording_url: "javascript:alert(1)//.mp4" })), status: 422, code: "invalid_event", says: "got javascript:" },
  { name: "recording_url javascript: behind spaces and case", req: post(recordingData({ recording_url: " \tJavaScript:alert(1)" })), status: 422, code: "invalid_event", says: "got javascript:" },
  { name: "recording_url relative", req: post(recordingData({ recording_url: "/recordings/1.mp4" })), status: 422, code: "invalid_event", says: "recording_url" },
  { name: "recording_url ftp:", req: post(recordingData({ recording_url: "ftp://files.example.test/1.mp4" })), status: 422, code: "invalid_event", says: "got ftp:" },
];

const counts = () =>
  h.db.get<{ d: number; c: number; r: number; l: number }>(
    sql`SELECT (SELECT count(*) FROM webhook_deliveries) d, (SELECT coalesce(sum(count), 0) FROM event_counts) c, (SELECT count(*) FROM recordings) r, (SELECT count(*) FROM live_sessions) l`,
  );

describe("bad deliveries", () => {
  it("has at least 40 of them", () => {
    expect(cases.length).toBeGreaterThanOrEqual(40);
  });

  let n = 0;
  it.each(cases)("$name → $status $code", async (c) => {
    const res = await send(h.baseUrl, c.req);
    expect(res.status).toBe(c.status);
    expect(res.headers["content-type"]).toMatch(/application\/json/);
    expect(res.json?.error?.code).toBe(c.code);
    expect(res.json?.error?.message.toLowerCase()).toContain(c.says.toLowerCase());
    // Never an internal detail or a secret in an answer.
    expect(res.text).not.toMatch(/SQLITE|stack|at .*\.ts|node_modules/i);
    expect(res.text).not.toContain(HOOK_PASSWORD);
    if (c.status === 401) expect(res.headers["www-authenticate"]).toMatch(/^Basic /);
    if (c.status === 405) expect(res.headers.allow).toBe("POST");
    // Nothing applied, and a valid delivery right after still works.
    expect(counts()).toEqual({ d: n, c: n, r: 0, l: 0 });
    const ok = await postJson(h.baseUrl, "acme", messageSent(A, `after-${n}`));
    expect(ok.status).toBe(200);
    n += 1;
    expect(counts()).toMatchObject({ d: n, c: n });
  });

  it("records why deliveries to known apps were refused, without bodies or secrets", () => {
    const rows = h.db.all<{ code: string; reason: string }>(sql`SELECT code, reason FROM webhook_rejections`);
    expect(rows.length).toBeGreaterThan(30);
    expect(new Set(rows.map((r) => r.code))).toEqual(new Set(["unauthorized", "webhook_disabled", "unsupported_media_type", "payload_too_large", "invalid_json", "invalid_utf8", "invalid_envelope", "app_mismatch", "invalid_event", "nesting_too_deep"]));
    for (const r of rows) expect(r.reason).not.toContain(HOOK_PASSWORD);
  });
});
