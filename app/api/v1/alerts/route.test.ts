import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The alerts API through its real route handlers, with API tokens and a warehouse file:
 * a 400 naming the field for every bad rule, admins only for changes, viewers limited to
 * the rules (and history) of their apps, secrets shown once, every change audited.
 */
const dir = mkdtempSync(path.join(tmpdir(), "callboard-alerts-api-"));
Object.assign(process.env, {
  NODE_ENV: "test", AUTH_SECRET: "test-secret-for-the-alerts-api-0123456789", LOG_LEVEL: "silent", ANALYTICS_WORKER: "off",
  DATABASE_PATH: path.join(dir, "warehouse.db"), CALLBOARD_ADMIN_EMAIL: "", CALLBOARD_ADMIN_PASSWORD: "",
});

const { db, closeDb } = await import("@/db");
const { addApp } = await import("@/lib/apps/registry");
const { listAudit } = await import("@/lib/auth/audit");
const { createApiToken } = await import("@/lib/auth/tokens");
const { createUser } = await import("@/lib/auth/users");
const collection = await import("./route");
const single = await import("./[id]/route");
const evaluateRoute = await import("./evaluate/route");

let adminToken: string;
let viewerToken: string;
const HOOK = "http://127.0.0.1:9/hooks/secret-path-XYZW";

beforeAll(async () => {
  const warehouse = db();
  for (const appId of ["alpha", "beta"]) addApp(warehouse, { appId, name: appId, region: "eu", apiKey: `key-${appId}` });
  const admin = await createUser(warehouse, { email: "admin@example.com", password: "admin-password-1", role: "admin" });
  const viewer = await createUser(warehouse, { email: "viewer@example.com", password: "viewer-password-1", role: "viewer", apps: ["beta"] });
  adminToken = (await createApiToken(warehouse, { userId: admin.id })).token;
  viewerToken = (await createApiToken(warehouse, { userId: viewer.id })).token;
});
afterAll(() => {
  closeDb();
  rmSync(dir, { recursive: true, force: true });
});

type Json = Record<string, unknown> & { data?: unknown; error?: { code: string; message: string; parameter?: string } };

function req(method: string, url: string, token: string | null, body?: unknown): Request {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  return new Request(`http://localhost${url}`, { method, headers, body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body) });
}

async function call(res: Promise<Response>): Promise<{ status: number; json: Json }> {
  const r = await res;
  return { status: r.status, json: (await r.json()) as Json };
}

const post = (body: unknown, token: string | null = adminToken) => call(collection.POST(req("POST", "/api/v1/alerts", token, body)));
const get = (query = "", token: string | null = adminToken) => call(collection.GET(req("GET", `/api/v1/alerts${query}`, token)));
const patch = (id: number | string, body: unknown, token = adminToken) => call(collection.PATCH(req("PATCH", `/api/v1/alerts?id=${id}`, token, body)));
const ctx = (id: number | string) => ({ params: Promise.resolve({ id: String(id) }) });

const valid = { name: "Unanswered spike", metric: "unansweredRate", filters: { app: ["alpha"], type: "video" }, windowSeconds: 300, condition: { op: "above", value: 20 }, minCalls: 10 };

describe("creating rules", () => {
  it("answers 201 with the rule; the destination's secret is in this answer only", async () => {
    const { status, json } = await post({ ...valid, destination: { url: HOOK, allowPrivate: true } });
    expect(status).toBe(201);
    expect(json.secret).toMatch(/^whsec_/);
    expect(json.data).toMatchObject({
      name: "Unanswered spike", metric: "unansweredRate", state: "ok", enabled: true, hasDestination: true, lastEvaluation: null,
      summary: "Unanswered rate above 20% over 5 minutes", destination: { origin: "http://127.0.0.1:9", hint: "…XYZW", allowPrivate: true },
    });
    const id = (json.data as { id: number }).id;
    const listed = await get();
    expect(JSON.stringify(listed.json)).not.toContain(String(json.secret));
    expect(JSON.stringify(listed.json)).not.toContain("secret-path");
    expect((await get(`?id=${id}`)).json.data).toMatchObject({ id, hasDestination: true });
  });

  it.each([
    [{ ...valid, name: "" }, "name"],
    [{ ...valid, name: undefined }, "name"],
    [{ ...valid, metric: "jitter" }, "metric"],
    [{ ...valid, windowSeconds: 60 }, "windowSeconds"],
    [{ ...valid, windowSeconds: 90_000 }, "windowSeconds"],
    [{ ...valid, windowSeconds: 420 }, "windowSeconds"],
    [{ ...valid, windowSeconds: "300" }, "windowSeconds"],
    [{ ...valid, condition: { op: "equals", value: 3 } }, "condition.op"],
    [{ ...valid, condition: { op: "above" } }, "condition.value"],
    [{ ...valid, condition: { op: "change", percent: 0 } }, "condition.percent"],
    [{ ...valid, condition: { op: "change", percent: 50, direction: "sideways" } }, "condition.direction"],
    [{ ...valid, condition: { op: "above", value: 150 } }, "condition.value"],
    [{ ...valid, minCalls: -1 }, "minCalls"],
    [{ ...valid, minCalls: 2.5 }, "minCalls"],
    [{ ...valid, filters: { type: "fax" } }, "filters.type"],
    [{ ...valid, filters: { app: "alpha" } }, "filters.app"],
    [{ ...valid, filters: { app: ["nope"] } }, "filters.app"],
    [{ ...valid, filters: { from: 1 } }, "filters"],
    [{ ...valid, filters: { participantsCount: -2 } }, "filters.participantsCount"],
    [{ ...valid, metric: "webhookDeliveries", filters: { app: ["alpha"], type: "video" } }, "filters.type"],
    [{ ...valid, treshold: 5 }, "request"],
    [{ ...valid, destination: { url: "ftp://example.com/x" } }, "destination.url"],
    [{ ...valid, destination: { url: "http://127.0.0.1:9/hook" } }, "destination.url"],
    [{ ...valid, destination: { url: "http://[::1]/hook", allowPrivate: "yes" } }, "destination.allowPrivate"],
    [{ ...valid, destination: { url: "http://localhost/hook" } }, "destination.url"],
  ])("refuses a bad rule with a 400 naming the field (%#: %s)", async (body, field) => {
    const { status, json } = await post(body);
    expect(status).toBe(400);
    expect(json.error?.parameter).toBe(field);
    expect(json.error?.message).toContain(field === "request" ? "treshold" : field);
  });

  it("refuses a body that is not a JSON object", async () => {
    for (const body of ["{not json", "[1,2]", '"text"']) {
      const { status, json } = await post(body);
      expect(status).toBe(400);
      expect(json.error?.code).toBe("bad_request");
    }
  });
});

describe("changing and removing", () => {
  it("PATCH changes the given fields, checks the whole rule again, and keeps the secret unless asked", async () => {
    const { json } = await post({ ...valid, name: "to change", destination: { url: HOOK, allowPrivate: true } });
    const id = (json.data as { id: number }).id;
    const renamed = await patch(id, { name: "renamed", condition: { op: "below", value: 5 } });
    expect(renamed.status).toBe(200);
    expect(renamed.json.secret).toBeUndefined();
    expect(renamed.json.data).toMatchObject({ name: "renamed", metric: "unansweredRate", summary: "Unanswered rate below 5% over 5 minutes", hasDestination: true });
    // The merged rule is checked: this metric takes no call filters.
    const mixed = await patch(id, { metric: "failedSyncRuns" });
    expect(mixed.status).toBe(400);
    expect(mixed.json.error?.parameter).toBe("filters.type");
    const rotated = await patch(id, { rotateSecret: true });
    expect(rotated.json.secret).toMatch(/^whsec_/);
    expect(rotated.json.secret).not.toBe(json.secret);
    const off = await call(single.PATCH(req("PATCH", `/api/v1/alerts/${id}`, adminToken, { enabled: false, destination: null }), ctx(id)));
    expect(off.json.data).toMatchObject({ enabled: false, hasDestination: false, destination: null });
    expect((await patch(id, { rotateSecret: true })).json.error?.parameter).toBe("rotateSecret");
    expect((await patch(id, { windowSeconds: 30 })).json.error?.parameter).toBe("windowSeconds");
  });

  it("answers 400 for a bad ?id=, 404 for an unknown rule or a path that names none, and authenticates first", async () => {
    expect((await patch("abc", { name: "x" })).json.error).toMatchObject({ code: "bad_request", parameter: "id" });
    expect((await call(collection.PATCH(req("PATCH", "/api/v1/alerts", adminToken, { name: "x" })))).json.error?.parameter).toBe("id");
    expect((await patch(999_999, { name: "x" })).status).toBe(404);
    expect((await call(single.DELETE(req("DELETE", "/api/v1/alerts/0", adminToken), ctx(0)))).status).toBe(404);
    // Nothing about the id is answered before the caller is known.
    expect((await call(collection.PATCH(req("PATCH", "/api/v1/alerts?id=abc", null, { name: "x" })))).status).toBe(401);
    expect((await call(single.DELETE(req("DELETE", "/api/v1/alerts/abc", null), ctx("abc")))).status).toBe(401);
  });

  it("DELETE removes the rule", async () => {
    const { json } = await post({ ...valid, name: "to remove" });
    const id = (json.data as { id: number }).id;
    const removed = await call(collection.DELETE(req("DELETE", `/api/v1/alerts?id=${id}`, adminToken)));
    expect(removed.status).toBe(200);
    expect((await get(`?id=${id}`)).status).toBe(404);
  });

  it("every change is audited, without the destination's path or secret", async () => {
    const entries = (await listAudit(db(), { limit: 1000 })).filter((e) => e.action.startsWith("alert."));
    expect(new Set(entries.map((e) => e.action))).toEqual(new Set(["alert.create", "alert.update", "alert.remove"]));
    const text = JSON.stringify(entries);
    expect(text).not.toContain("secret-path");
    expect(text).not.toContain("whsec_");
    expect(entries.find((e) => e.action === "alert.update")?.details).toMatchObject({ name: "renamed" });
  });
});

describe("who may see and do what", () => {
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    for (const [key, filters] of Object.entries({ alpha: { app: ["alpha"] }, beta: { app: ["beta"] }, every: {}, both: { app: ["alpha", "beta"] } })) {
      const { json } = await post({ name: `calls ${key}`, metric: "calls", filters, windowSeconds: 300, condition: { op: "below", value: 1 }, destination: { url: HOOK, allowPrivate: true } });
      ids[key] = (json.data as { id: number }).id;
    }
  });

  it("without a credential: 401", async () => {
    expect((await get("", null)).status).toBe(401);
    expect((await post(valid, null)).status).toBe(401);
  });

  it("viewers cannot create, change, remove or evaluate: 403", async () => {
    expect((await post(valid, viewerToken)).status).toBe(403);
    expect((await patch(ids.beta, { name: "mine" }, viewerToken)).status).toBe(403);
    expect((await call(collection.DELETE(req("DELETE", `/api/v1/alerts?id=${ids.beta}`, viewerToken)))).status).toBe(403);
    expect((await call(evaluateRoute.POST(req("POST", "/api/v1/alerts/evaluate", viewerToken, {}))))).toMatchObject({ status: 403 });
  });

  it("viewers see the rules and history of their apps only", async () => {
    // Every rule fires on an empty window (0 calls < 1): history for all four.
    const evaluated = await call(evaluateRoute.POST(req("POST", "/api/v1/alerts/evaluate", adminToken, {})));
    expect(evaluated.status).toBe(200);
    const fired = (evaluated.json.data as { evaluated: Array<{ ruleId: number; outcome: string }> }).evaluated.filter((e) => e.outcome === "fired").map((e) => e.ruleId);
    expect(fired).toEqual(expect.arrayContaining(Object.values(ids)));

    const mine = await get("", viewerToken);
    expect((mine.json.data as Array<{ id: number }>).map((r) => r.id)).toEqual([ids.beta]);
    expect(mine.json.firing).toBe(1);
    expect((mine.json.history as Array<{ ruleId: number; notification: unknown }>).map((e) => [e.ruleId, e.notification])).toEqual([[ids.beta, null]]);
    expect((mine.json.data as Array<{ destination: unknown; hasDestination: boolean }>)[0]).toMatchObject({ destination: null, hasDestination: true });

    for (const hidden of [ids.alpha, ids.every, ids.both]) {
      expect((await get(`?id=${hidden}`, viewerToken)).status).toBe(404);
      expect((await call(single.GET(req("GET", `/api/v1/alerts/${hidden}`, viewerToken), ctx(hidden)))).status).toBe(404);
    }
    const admin = await get();
    expect(admin.json.firing).toBeGreaterThanOrEqual(4);

    // ?app= narrows the list to the rules concerning an app (by name, or every app); an app
    // the caller may not see answers 404, as on every report route.
    const ruleIds = (r: { json: Json }) => (r.json.data as Array<{ id: number }>).map((x) => x.id);
    const forAlpha = await get("?app=alpha");
    expect(ruleIds(forAlpha)).toEqual(expect.arrayContaining([ids.alpha, ids.every, ids.both]));
    expect(ruleIds(forAlpha)).not.toContain(ids.beta);
    expect((forAlpha.json.history as Array<{ ruleId: number }>).every((e) => e.ruleId !== ids.beta)).toBe(true);
    expect(ruleIds(await get("?app=beta", viewerToken))).toEqual([ids.beta]);
    expect(await get("?app=alpha", viewerToken)).toMatchObject({ status: 404, json: { error: { code: "not_found" } } });
    expect((await get("?app=nope")).status).toBe(404);
    expect((await get("?app=")).json.error).toMatchObject({ code: "bad_request", parameter: "app" });
    expect((admin.json.history as Array<{ ruleId: number; notification: { status: string } | null }>).find((e) => e.ruleId === ids.alpha)?.notification?.status).toBeDefined();
  });
});
