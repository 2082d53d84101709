import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { envelope } from "@/lib/ingest/test-deliveries";
import { postJson, startHarness, type Harness } from "@/lib/ingest/test-harness";
import { filters, type Filters } from "../../../filters";
import type { ClientRow } from "../../../report-types";
import { createMemoryEngine } from "../index";
import { rng } from "../../../test-fixtures";

/**
 * The clients report against a plain TypeScript count of the joins sent: random
 * initial_config values (strings or booleans, missing fields, seconds or milliseconds)
 * delivered through the real ingest, repeats included, in two apps, some calls synced.
 */
let h: Harness;
const T = 1_767_225_600;
const PLATFORMS = ["web", "android", "ios", undefined];
const SDKS = [["web", "4"], ["android", "4"], ["ios", "3"], [undefined, undefined]] as const;
interface Join { app: string; appPk: number; session: string; at: number; platform?: string; sdk?: string; version?: string; audioOnly?: boolean; videoMuted?: boolean; type: string }
const joins: Join[] = [];

beforeAll(async () => {
  h = await startHarness();
  const r = rng(9);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)];
  for (let i = 0; i < 240; i++) {
    const app = r() < 0.7 ? "acme" : "open-app";
    const session = `cl-${Math.floor(i / 3)}`;
    const [sdk, version] = pick(SDKS);
    const j: Join = { app, appPk: app === "acme" ? h.appPk.acme : h.appPk.open, session, at: T + i * 3_600, platform: pick(PLATFORMS), sdk, version, audioOnly: r() < 0.3, videoMuted: r() < 0.5, type: i % 2 ? "audio" : "video" };
    joins.push(j);
    const config: Record<string, unknown> = { platform: j.platform, sdk: j.sdk, call_version: j.version, is_audio_only: i % 4 === 0 ? j.audioOnly : String(j.audioOnly), is_video_muted: String(j.videoMuted) };
    const d = envelope({ appId: app }, i % 5 ? "call_participant_joined" : "meeting_participant_joined", {
      sessionId: session, occupant: { name: `p${i}`, joined_at: i % 7 ? j.at : j.at * 1000, audio_call: String(j.audioOnly) }, initial_config: config,
    }, i % 5 ? "call" : "meet");
    expect((await postJson(h.baseUrl, app, d)).status).toBe(200);
    if (i % 11 === 0) expect((await postJson(h.baseUrl, app, d)).status).toBe(200); // a repeat counts once
  }
  // Synced calls (for the call filters): each session's type.
  for (const j of joins.filter((_, i) => i % 3 === 0)) {
    h.db.run(sql`INSERT INTO calls (app_pk, session_id, type, status, start_at, platform_has_recording, has_recording, source, first_seen_ms, updated_ms)
      VALUES (${j.appPk}, ${j.session}, ${j.type}, 'ended', ${j.at}, 0, 0, 'sync', 0, 0) ON CONFLICT DO NOTHING`);
  }
});
afterAll(async () => {
  await h?.close();
});

/** The oracle: per app, dimension and value, sessions, distinct calls and share. */
function expected(f: Filters, apps: string[]): ClientRow[] {
  const typeOf = new Map(joins.filter((_, i) => i % 3 === 0).map((j) => [`${j.app}/${j.session}`, j.type]));
  const kept = joins.filter((j) => apps.includes(j.app) && (f.from === undefined || j.at >= f.from) && (f.to === undefined || j.at < f.to) && (f.type === undefined || typeOf.get(`${j.app}/${j.session}`) === f.type));
  const out = new Map<string, { sessions: number; calls: Set<string> }>();
  const totals = new Map<string, number>();
  for (const j of kept) {
    const values = { platform: j.platform ?? "unknown", sdk: j.sdk ? `${j.sdk} ${j.version}` : "unknown", media: j.audioOnly ? "audio only" : "video", videoMuted: j.videoMuted ? "camera off" : "camera on" };
    for (const [dim, value] of Object.entries(values)) {
      const k = `${j.app}|${dim}|${value}`;
      const hit = out.get(k) ?? { sessions: 0, calls: new Set() };
      hit.sessions++;
      hit.calls.add(j.session);
      out.set(k, hit);
      totals.set(`${j.app}|${dim}`, (totals.get(`${j.app}|${dim}`) ?? 0) + 1);
    }
  }
  const order = ["platform", "sdk", "media", "videoMuted"];
  return [...out].map(([k, v]) => {
    const [app, dimension, value] = k.split("|");
    return { app, dimension, value, sessions: v.sessions, calls: v.calls.size, share: Math.round((v.sessions / totals.get(`${app}|${dimension}`)!) * 1000) / 1000 } as ClientRow;
  }).sort((a, b) => a.app.localeCompare(b.app) || order.indexOf(a.dimension) - order.indexOf(b.dimension) || b.sessions - a.sessions || a.value.localeCompare(b.value));
}

describe("the clients report", () => {
  const engine = () => createMemoryEngine({ db: () => h.db });
  const cases: Array<[Partial<Filters>, string[]]> = [
    [{}, ["acme", "open-app"]],
    [{ apps: ["acme"] }, ["acme"]],
    [{ from: T + 50 * 3_600, to: T + 150 * 3_600 }, ["acme", "open-app"]],
    [{ type: "video" }, ["acme", "open-app"]],
  ];
  it.each(cases)("equals a plain count of the joins sent (%j)", async (partial, apps) => {
    const f = filters(partial);
    const want = expected(f, apps);
    expect(want.length).toBeGreaterThan(8);
    expect((await engine().report("clients", f, { appPks: "all" })).data).toEqual(want);
  });

  it("answers a viewer only their apps, and an app they cannot see with 404", async () => {
    const rows = (await engine().report("clients", filters({}), { appPks: [h.appPk.acme] })).data;
    expect(new Set(rows.map((r) => r.app))).toEqual(new Set(["acme"]));
    await expect(engine().report("clients", filters({ apps: ["open-app"] }), { appPks: [h.appPk.acme] })).rejects.toMatchObject({ status: 404 });
  });
});
