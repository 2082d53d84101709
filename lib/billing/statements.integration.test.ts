import { parse } from "csv-parse/sync";
import Decimal from "decimal.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Statements over a warehouse filled by a real sync from the emulator over HTTP, read
 * through the analytics engine, held to an independent computation over the emulator's
 * truth records: calls grouped by the local month Intl prints for their start, minutes
 * added as exact decimals, prices applied by a separate formula.
 */
process.env.AUTH_SECRET ??= "integration-test-secret-at-least-32-characters";
process.env.LOG_LEVEL ??= "silent";
const { tempDbFile } = await import("@/lib/analytics/test-fixtures");
process.env.DATABASE_PATH = tempDbFile("statements-int");

const { db: warehouse, closeDb } = await import("@/db");
const { addApp } = await import("@/lib/apps/registry");
const { authorizeRequest, callerForUser } = await import("@/lib/auth/authorize");
const { createApiToken } = await import("@/lib/auth/tokens");
const { createUser } = await import("@/lib/auth/users");
const { listAudit } = await import("@/lib/auth/audit");
const { spawnEmulator } = await import("@/lib/emulator/testing");
const { syncApp } = await import("@/lib/sync");
const { buildStatements } = await import("./statements");
const { issueStatement } = await import("./issue");
const { setPriceSheet } = await import("./price-sheets");
const { handleStatementsGet, handleStatementsPost } = await import("./http");
const { closeIngestor, handleWebhookRequest } = await import("@/lib/ingest");
const { recordingGenerated } = await import("@/lib/ingest/fixtures");

type Emu = Awaited<ReturnType<typeof spawnEmulator>>;
type Caller = NonNullable<Awaited<ReturnType<typeof callerForUser>>>;

interface Truth { app: string; sessionId: string; start: number; audio: Decimal; video: Decimal; rec: boolean; parts: Array<{ uid: string; audio: Decimal; video: Decimal }> }

const NOW = 1_767_225_600; // 2026-01-01T00:00:00Z: the emulator's history ends here
const CLI = { email: "cli" };
let emu: Emu;
let admin: Caller;
let viewer: Caller;
let viewerToken = "";
let adminToken = "";
let truth: Truth[] = [];

/**
 * An emulator control call, tried twice: a keep-alive socket the emulator closes as it
 * idles out ("other side closed") fails the first request sent on it.
 */
async function twice<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch {
    return fn();
  }
}

const dec = (v: unknown) => new Decimal(v === undefined || v === null || v === "" ? 0 : String(v));

async function readTruth(): Promise<Truth[]> {
  const out: Truth[] = [];
  for (const a of emu.apps) {
    for (const w of (await twice(() => emu.admin.truth(a.appId))) as unknown as Array<Record<string, unknown>>) {
      const started = Math.trunc(Number(w.startedAt ?? 0));
      out.push({
        app: a.appId, sessionId: String(w.sessionId), start: started > 0 ? started : Math.trunc(Number(w.initiatedAt)),
        audio: dec(w.totalAudioMinutes), video: dec(w.totalVideoMinutes), rec: w.hasRecording === true || w.hasRecording === "true",
        parts: (w.participants as Array<Record<string, unknown>>).map((p) => ({ uid: String(p.uid), audio: dec(p.totalAudioMinutes), video: dec(p.totalVideoMinutes) })),
      });
    }
  }
  return out;
}

async function syncAll(full: boolean): Promise<void> {
  for (const a of emu.apps) {
    const row = warehouse().select().from((await import("@/db/schema")).apps).all().find((r) => r.appId === a.appId)!;
    expect((await syncApp(warehouse(), row, { trigger: "test", full })).status).toBe("succeeded");
  }
}

/** The local month of an instant, as Intl prints it (not through month.ts). */
function localMonth(t: number, tz: string): string {
  const parts = new Intl.DateTimeFormat("en-US", { timeZone: tz, year: "numeric", month: "2-digit" }).formatToParts(new Date(t * 1000));
  return `${parts.find((p) => p.type === "year")!.value}-${parts.find((p) => p.type === "month")!.value}`;
}

function expectedUsage(app: string, month: string, tz: string) {
  const calls = truth.filter((c) => c.app === app && localMonth(c.start, tz) === month);
  return {
    calls: calls.length,
    audio: calls.reduce((s, c) => s.plus(c.audio), new Decimal(0)),
    video: calls.reduce((s, c) => s.plus(c.video), new Decimal(0)),
    recordings: calls.filter((c) => c.rec).length,
  };
}

interface Sheet { currency: string; audio: string; video: string; rec: string; included: string; minimum: string }

/** The bill by the written rule: allowance to the dearer kind, each line rounded half-up to cents, minimum tops up. */
function expectedBill(u: ReturnType<typeof expectedUsage>, s: Sheet) {
  const cents = (d: Decimal) => d.toDecimalPlaces(2, Decimal.ROUND_HALF_UP);
  const inc = new Decimal(s.included);
  const videoFirst = new Decimal(s.video).gt(s.audio);
  const firstUsed = videoFirst ? u.video : u.audio;
  const firstFree = Decimal.min(firstUsed, inc);
  const secondUsed = videoFirst ? u.audio : u.video;
  const secondFree = Decimal.min(secondUsed, inc.minus(firstFree));
  const [audioFree, videoFree] = videoFirst ? [secondFree, firstFree] : [firstFree, secondFree];
  const audio = cents(u.audio.minus(audioFree).times(s.audio));
  const video = cents(u.video.minus(videoFree).times(s.video));
  const rec = cents(new Decimal(u.recordings).times(s.rec));
  const sum = audio.plus(video).plus(rec);
  return { audio: audio.toFixed(2), video: video.toFixed(2), rec: rec.toFixed(2), total: Decimal.max(sum, s.minimum).toFixed(2) };
}

const DEFAULT: Sheet = { currency: "USD", audio: "0.004", video: "0.0125", rec: "0.05", included: "0", minimum: "0" };
const ALPHA_H2: Sheet = { currency: "USD", audio: "0.0035", video: "0.009", rec: "0.04", included: "2500", minimum: "0" };
const BETA: Sheet = { currency: "USD", audio: "0.002", video: "0.003", rec: "0.01", included: "100", minimum: "150.00" };
const put = (app: string | null, effectiveMonth: string, s: Sheet) =>
  setPriceSheet(warehouse(), CLI, { app, effectiveMonth, currency: s.currency, audioPerMinute: s.audio, videoPerMinute: s.video, perRecording: s.rec, includedMinutes: s.included, monthlyMinimum: s.minimum });

function sheetFor(app: string, month: string): Sheet {
  if (app === "beta" && month >= "2025-02") return BETA;
  if (app === "alpha" && month >= "2025-07") return ALPHA_H2;
  return DEFAULT;
}

const get = (query: string, token = adminToken) =>
  handleStatementsGet(new Request(`http://local/api/v1/statements?${query}`, { headers: { authorization: `Bearer ${token}` } }), { db: warehouse, authorize: (r) => authorizeRequest(warehouse(), r) });
const post = (body: unknown, token = adminToken) =>
  handleStatementsPost(new Request("http://local/api/v1/statements", { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) }), {
    db: warehouse, authorize: (r) => authorizeRequest(warehouse(), r),
  });

beforeAll(async () => {
  emu = await spawnEmulator({ seed: 16, now: NOW, months: 14, apps: [{ appId: "alpha", count: 3000, region: "in" }, { appId: "beta", count: 1200, region: "eu" }] });
  for (const a of emu.apps) addApp(warehouse(), { appId: a.appId, name: `App ${a.appId}`, region: a.region, apiKey: a.apiKey, callsUrl: a.callsUrl });
  await syncAll(false);
  truth = await readTruth();
  const a = await createUser(warehouse(), { email: "admin@example.com", password: "admin-password-123", role: "admin" });
  const v = await createUser(warehouse(), { email: "viewer@example.com", password: "viewer-password-123", role: "viewer", apps: ["beta"] });
  admin = (await callerForUser(warehouse(), a.id))!;
  viewer = (await callerForUser(warehouse(), v.id))!;
  adminToken = (await createApiToken(warehouse(), { userId: a.id })).token;
  viewerToken = (await createApiToken(warehouse(), { userId: v.id })).token;
  // A default for everyone, beta's own sheet from February, alpha's own from July (the mid-year change).
  put(null, "2024-01", DEFAULT);
  put("beta", "2025-02", BETA);
  put("alpha", "2025-07", ALPHA_H2);
}, 180_000);

afterAll(async () => {
  await emu?.stop();
  await closeIngestor();
  closeDb();
});

const amountsOf = (s: { lines: Array<{ kind: string; amount: string }> }) => Object.fromEntries(s.lines.map((l) => [l.kind, l.amount]));

describe("statements against an independent computation", () => {
  it("usage and money of every app, month by month, in UTC, +05:45 and DST zones, across the mid-year price change", async () => {
    const cases: Array<[string, string]> = [
      ["2025-01", "UTC"], ["2025-03", "Europe/Berlin"], ["2025-03", "America/New_York"], ["2025-06", "Asia/Kathmandu"], ["2025-07", "Asia/Kathmandu"],
      ["2025-07", "UTC"], ["2025-10", "Europe/Berlin"], ["2025-11", "America/New_York"], ["2025-12", "Pacific/Chatham"],
    ];
    for (const [month, tz] of cases) {
      const { statements } = await buildStatements(warehouse(), { month, tz, apps: [], detail: false }, admin, NOW + 86_400);
      expect(statements.map((s) => s.app)).toEqual(["alpha", "beta"]);
      for (const s of statements) {
        const label = `${s.app} ${month} ${tz}`;
        const u = expectedUsage(s.app, month, tz);
        expect(u.calls, `${label}: a month with calls`).toBeGreaterThan(0);
        expect(s.usage, label).toMatchObject({ calls: u.calls, audioMinutes: u.audio.toFixed(3), videoMinutes: u.video.toFixed(3), recordings: u.recordings });
        const bill = expectedBill(u, sheetFor(s.app, month));
        expect(amountsOf(s), label).toMatchObject({ audio: bill.audio, video: bill.video, recordings: bill.rec });
        expect(s.total, label).toBe(bill.total);
        expect(s.status, label).toBe("draft");
      }
    }
  });

  it("the month edges in Asia/Kathmandu are 18:15 UTC, and calls right at them count in the right month", async () => {
    const { range } = await buildStatements(warehouse(), { month: "2025-08", tz: "Asia/Kathmandu", apps: ["alpha"], detail: false }, admin, NOW);
    expect(range.from).toBe(Date.UTC(2025, 6, 31, 18, 15) / 1000);
    expect(range.to).toBe(Date.UTC(2025, 7, 31, 18, 15) / 1000);
    // Every call between UTC midnight and the Kathmandu month start is July there, August in UTC.
    const edge = truth.filter((c) => c.app === "alpha" && c.start >= Date.UTC(2025, 6, 31, 18, 15) / 1000 && c.start < Date.UTC(2025, 7, 1) / 1000);
    const inKtm = await buildStatements(warehouse(), { month: "2025-08", tz: "Asia/Kathmandu", apps: ["alpha"], detail: false }, admin, NOW);
    const inUtc = await buildStatements(warehouse(), { month: "2025-08", tz: "UTC", apps: ["alpha"], detail: false }, admin, NOW);
    const lateAugust = truth.filter((c) => c.app === "alpha" && c.start >= Date.UTC(2025, 7, 31, 18, 15) / 1000 && c.start < Date.UTC(2025, 8, 1) / 1000);
    expect(inKtm.statements[0].usage.calls - inUtc.statements[0].usage.calls).toBe(edge.length - lateAugust.length);
  });

  it("included minutes and the monthly minimum: beta's small months are topped up to 150.00", async () => {
    const { statements: [beta] } = await buildStatements(warehouse(), { month: "2025-05", tz: "UTC", apps: ["beta"], detail: false }, admin, NOW);
    const u = expectedUsage("beta", "2025-05", "UTC");
    expect(beta.lines.find((l) => l.kind === "video")!.included).toBe(Decimal.min(u.video, 100).toFixed(3));
    const usageAmount = new Decimal(beta.usageAmount!);
    expect(usageAmount.lt(150)).toBe(true);
    expect(beta.lines.at(-1)).toMatchObject({ kind: "minimum", amount: new Decimal(150).minus(usageAmount).toFixed(2) });
    expect(beta.total).toBe("150.00");
  });

  it("per participant uid detail equals the participant rows of the month's calls", async () => {
    const { statements: [beta] } = await buildStatements(warehouse(), { month: "2025-09", tz: "Asia/Kathmandu", apps: ["beta"], detail: true }, admin, NOW);
    const want = new Map<string, { calls: number; audio: Decimal; video: Decimal }>();
    for (const c of truth.filter((t) => t.app === "beta" && localMonth(t.start, "Asia/Kathmandu") === "2025-09")) {
      for (const uid of new Set(c.parts.map((p) => p.uid))) {
        const w = want.get(uid) ?? { calls: 0, audio: new Decimal(0), video: new Decimal(0) };
        w.calls++;
        for (const p of c.parts.filter((x) => x.uid === uid)) { w.audio = w.audio.plus(p.audio); w.video = w.video.plus(p.video); }
        want.set(uid, w);
      }
    }
    expect(beta.participants!.length).toBe(want.size);
    for (const p of beta.participants!) {
      const w = want.get(p.uid)!;
      expect(p, p.uid).toEqual({ uid: p.uid, calls: w.calls, audioMinutes: w.audio.toFixed(3), videoMinutes: w.video.toFixed(3) });
    }
  });
});

describe("issuing freezes a month", () => {
  it("refuses a month that is not over, an app without prices, and a second issue", async () => {
    const now = Date.UTC(2025, 9, 15) / 1000; // mid-October 2025
    await expect(issueStatement(warehouse(), admin, { month: "2025-10", tz: "UTC", app: "alpha" }, now)).rejects.toMatchObject({ status: 409, message: /not ended/ });
    await expect(issueStatement(warehouse(), viewer, { month: "2025-09", tz: "UTC", app: "beta" }, now)).rejects.toMatchObject({ status: 403 });
    // What a hand-made form could send is a 400, not a crash.
    await expect(issueStatement(warehouse(), admin, { month: "2025-9", tz: "UTC", app: "beta" }, now)).rejects.toMatchObject({ status: 400, message: /month/ });
    await expect(issueStatement(warehouse(), admin, { month: "2025-09", tz: "Nowhere/City", app: "beta" }, now)).rejects.toMatchObject({ status: 400, message: /tz/ });
    const res = await post({ month: "2025-09", tz: "UTC", app: "beta" }, viewerToken);
    expect(res.status).toBe(403);
    // Before the first sheet's month: usage only, and nothing to issue.
    const { statements: [early] } = await buildStatements(warehouse(), { month: "2023-12", tz: "UTC", apps: ["alpha"], detail: false }, admin, now);
    expect(early).toMatchObject({ status: "unpriced", total: null, lines: [] });
    await expect(issueStatement(warehouse(), admin, { month: "2023-12", tz: "UTC", app: "alpha" }, now)).rejects.toMatchObject({ status: 409, message: /no price sheet/ });
  });

  it("an issued statement is unchanged after a re-sync that changes its month; the difference is a pending adjustment", async () => {
    const month = "2025-10";
    const tz = "Asia/Kathmandu";
    const res = await post({ month, tz, app: "alpha" });
    expect(res.status).toBe(201);
    const issued = ((await res.json()) as { data: { issued: { number: string }; total: string; lines: unknown[] } }).data;
    expect(issued.issued.number).toMatch(/^ST-\d{6}$/);
    const before = await (await get(`month=${month}&tz=${encodeURIComponent(tz)}&app=alpha&detail=participants`)).json();

    // The platform now reports recordings on five calls of that month that had none: a full re-sync brings them in.
    const changed = truth.filter((c) => c.app === "alpha" && localMonth(c.start, tz) === month && !c.rec).slice(0, 5);
    expect(changed.length).toBe(5);
    for (const c of changed) await twice(() => emu.admin.patchCall("alpha", c.sessionId, { hasRecording: true }));
    await syncAll(true);
    truth = await readTruth();

    const after = (await (await get(`month=${month}&tz=${encodeURIComponent(tz)}&app=alpha&detail=participants`)).json()) as { data: Array<Record<string, unknown>> };
    const { pendingAdjustment, ...frozen } = after.data[0] as { pendingAdjustment: { amount: string; delta: { recordings: number } } } & Record<string, unknown>;
    const { pendingAdjustment: none, ...frozenBefore } = (before as { data: Array<Record<string, unknown>> }).data[0];
    expect(none).toBeNull();
    expect(frozen).toEqual(frozenBefore);
    // 5 more recordings at alpha's 0.04 (second-half sheet).
    expect(pendingAdjustment).toMatchObject({ amount: "0.20", delta: { recordings: 5 } });
    const recomputed = expectedBill(expectedUsage("alpha", month, tz), sheetFor("alpha", month));
    expect(new Decimal(issued.total).plus(pendingAdjustment.amount).toFixed(2)).toBe(recomputed.total);
  });

  it("the next statement carries the adjustment; both are audited; it is then no longer pending", async () => {
    const res = await post({ month: "2025-11", tz: "UTC", app: "alpha" });
    expect(res.status).toBe(201);
    const nov = ((await res.json()) as { data: { lines: Array<{ kind: string; amount: string; adjusts?: { month: string } }>; total: string; usageAmount: string; minimumTopUp: string } }).data;
    const carried = nov.lines.filter((l) => l.kind === "adjustment");
    expect(carried).toMatchObject([{ amount: "0.20", adjusts: { month: "2025-10" } }]);
    expect(nov.total).toBe(new Decimal(nov.usageAmount).plus(nov.minimumTopUp).plus("0.20").toFixed(2));
    const oct = (await (await get("month=2025-10&tz=Asia%2FKathmandu&app=alpha")).json()) as { data: Array<{ pendingAdjustment: unknown; carriedBy: Array<{ month: string; amount: string }> }> };
    expect(oct.data[0].pendingAdjustment).toBeNull();
    expect(oct.data[0].carriedBy).toMatchObject([{ month: "2025-11", amount: "0.20" }]);
    const audit = await listAudit(warehouse(), { limit: 20 });
    expect(audit.filter((e) => e.action === "statement.issue").map((e) => e.target)).toEqual(["alpha 2025-11", "alpha 2025-10"]);
    expect(audit.find((e) => e.action === "statement.adjustment")).toMatchObject({ target: "alpha 2025-11", details: { adjusts: expect.stringMatching(/^ST-/), amount: "0.20" } });
    // Issuing November again is refused, and prices of issued months are history.
    expect((await post({ month: "2025-11", tz: "UTC", app: "alpha" })).status).toBe(409);
    expect(() => put("alpha", "2025-11", DEFAULT)).toThrow(/issued/);
    expect(() => put(null, "2025-06", DEFAULT)).toThrow(/issued/);
    expect(put("alpha", "2025-12", ALPHA_H2).effectiveMonth).toBe("2025-12");
  });

  it("a recording webhook after issue changes usage, not the statement; a change worth 0.00 is carried as a 0.00 line", async () => {
    expect((await post({ month: "2025-07", tz: "UTC", app: "beta" })).status).toBe(201);
    const before = (await (await get("month=2025-07&app=beta")).json()) as { data: Array<{ total: string; usage: { recordings: number } }> };
    const call = truth.find((c) => c.app === "beta" && localMonth(c.start, "UTC") === "2025-07" && !c.rec)!;
    const delivery = recordingGenerated({ appId: "beta" }, call.sessionId, call.start + 5);
    const res = await handleWebhookRequest(new Request("http://local/api/webhooks/beta", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(delivery) }), "beta");
    expect(res.status).toBe(200);
    const after = (await (await get("month=2025-07&app=beta")).json()) as { data: Array<{ total: string; usage: { recordings: number }; pendingAdjustment: { amount: string; delta: { recordings: number }; usageChanged: boolean } }> };
    expect(after.data[0].usage).toEqual(before.data[0].usage);
    expect(after.data[0].total).toBe(before.data[0].total);
    // Beta's July is topped up to its 150.00 minimum: one more recording costs nothing more.
    expect(after.data[0].total).toBe("150.00");
    expect(after.data[0].pendingAdjustment).toMatchObject({ amount: "0.00", delta: { recordings: 1 }, usageChanged: true });
    const aug = (await (await post({ month: "2025-08", tz: "UTC", app: "beta" })).json()) as { data: { lines: Array<{ kind: string; amount: string; adjusts?: { month: string } }> } };
    expect(aug.data.lines.filter((l) => l.kind === "adjustment")).toMatchObject([{ amount: "0.00", adjusts: { month: "2025-07" } }]);
    const july = (await (await get("month=2025-07&app=beta")).json()) as { data: Array<{ pendingAdjustment: unknown }> };
    expect(july.data[0].pendingAdjustment).toBeNull();
  });
});

describe("the route", () => {
  it("viewers see their apps' statements only", async () => {
    const all = (await (await get("month=2025-11", viewerToken)).json()) as { data: Array<{ app: string }> };
    expect(all.data.map((s) => s.app)).toEqual(["beta"]);
    const other = await get("month=2025-11&app=alpha", viewerToken);
    expect(other.status).toBe(404);
    expect(await other.json()).toMatchObject({ error: { code: "not_found" } });
    const csv = await (await get("month=2025-11&format=csv", viewerToken)).text();
    expect(csv).not.toContain("alpha");
  });

  it("bad input is a 400 naming the parameter", async () => {
    for (const [query, parameter] of [["", "month"], ["month=2025-13", "month"], ["month=2025-11&tz=Mars%2FBase", "tz"], ["month=2025-11&format=xml", "format"], ["month=2025-11&month=2025-10", "month"]]) {
      const res = await get(query);
      expect(res.status, query).toBe(400);
      expect(await res.json(), query).toMatchObject({ error: { code: "invalid_parameter", parameter } });
    }
    expect((await post({ month: "2025-09", app: "alpha", extra: 1 })).status).toBe(400);
    expect((await post({ month: "2025-09", app: "nope" })).status).toBe(404);
    // The caller is known before the query is read: a bad query without a valid token is a 401.
    expect((await get("month=2025-13", "cb_not-a-real-token")).status).toBe(401);
    // An app the caller may not see: 404 before the month is read.
    expect((await get("app=nope")).status).toBe(404);
  });

  it("the CSV round-trips to the JSON, hostile uids and negative amounts included", async () => {
    const query = "month=2025-10&tz=Asia%2FKathmandu&detail=participants";
    const json = (await (await get(query)).json()) as { data: Array<{ app: string; lines: Array<Record<string, string>>; total: string; participants: Array<{ uid: string; calls: number; audioMinutes: string; videoMinutes: string }>; pendingAdjustment: { amount: string } | null }> };
    const res = await get(`${query}&format=csv`);
    expect(res.headers.get("content-type")).toContain("text/csv");
    // Named for the month, the detail and the zone (another month or zone: another name).
    expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename="callboard-statements-2025-10-participants_as-of_\d{4}-\d{2}-\d{2}_Asia-Kathmandu\.csv"$/);
    const rows = parse(await res.text(), { columns: true }) as Array<Record<string, string>>;
    const unneutralise = (v: string) => (/^'[=+\-@\t\r]/.test(v) ? v.slice(1) : v);
    for (const s of json.data) {
      const mine = rows.filter((r) => r.app === s.app);
      expect(mine.filter((r) => !["total", "pending_adjustment", "participant", "usage"].includes(r.line)).map((r) => ({ kind: r.line, quantity: r.quantity, included: r.included, billable: r.billable, unitPrice: r.unitPrice, amount: r.amount })))
        .toEqual(s.lines.map((l) => ({ kind: l.kind, quantity: l.quantity, included: l.included, billable: l.billable, unitPrice: l.unitPrice, amount: l.amount })));
      expect(mine.find((r) => r.line === "total")?.amount).toBe(s.total);
      expect(mine.find((r) => r.line === "pending_adjustment")?.amount).toBe(s.pendingAdjustment?.amount);
      expect(mine.filter((r) => r.line === "participant").map((r) => ({ uid: unneutralise(r.uid), calls: Number(r.calls), audioMinutes: r.audioMinutes, videoMinutes: r.videoMinutes }))).toEqual(s.participants);
    }
    expect(rows.some((r) => r.uid.startsWith("'="))).toBe(true); // the emulator's formula-like uid, neutralised
  });

  it("a negative pending adjustment stays a number in the CSV", async () => {
    // Alpha's September: issue it, then the platform takes two recordings away.
    expect((await post({ month: "2025-09", tz: "UTC", app: "alpha" })).status).toBe(201);
    const gone = truth.filter((c) => c.app === "alpha" && localMonth(c.start, "UTC") === "2025-09" && c.rec).slice(0, 2);
    for (const c of gone) await twice(() => emu.admin.patchCall("alpha", c.sessionId, { hasRecording: false }));
    await syncAll(true);
    const json = (await (await get("month=2025-09&app=alpha")).json()) as { data: Array<{ pendingAdjustment: { amount: string; delta: { recordings: number } } }> };
    expect(json.data[0].pendingAdjustment).toMatchObject({ amount: "-0.08", delta: { recordings: -2 } });
    const rows = parse(await (await get("month=2025-09&app=alpha&format=csv")).text(), { columns: true }) as Array<Record<string, string>>;
    expect(rows.find((r) => r.line === "pending_adjustment")?.amount).toBe("-0.08");
  });
});
