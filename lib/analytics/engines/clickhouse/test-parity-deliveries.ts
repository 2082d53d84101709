/**
 * Test support of the parity suite: webhook deliveries of synced calls sent through the
 * real ingest into the SQLite file (where the forwarder or the copy takes them on to
 * ClickHouse) — the facts of the clients report and of a call's event log. Joins say
 * what they joined with in every way a platform may: strings or booleans, upper case and
 * spaces, numeric versions, fields left out, joined_at in seconds or milliseconds or
 * missing, and bodies pretty-printed (whitespace a naive JSON reader trips on).
 */
import type { Db } from "@/db/client";
import { envelope, participantLeft, sessionEnded, sessionStarted } from "@/lib/ingest/test-deliveries";
import { createIngestor } from "@/lib/ingest/ingest";
import { openIngestConnection } from "@/lib/ingest/runtime";
import { rng } from "@/lib/analytics/test-fixtures";

const PLATFORMS = ["web", "Android", " ios ", undefined, "", 7];
const SDKS: Array<[unknown, unknown]> = [["web", "4"], ["android", 4], ["IOS", "3"], [undefined, "4"], ["flutter", undefined], [true, "1"]];
const FLAGS = [true, false, "true", "false", "1", 0, undefined, "maybe"];

/**
 * Sends 1–3 joins (with a leave and the start and end for some) for each call `where`
 * selects (SQL over `calls c JOIN apps a`), plus joins for sessions never synced.
 * Returns how many deliveries were stored.
 */
export async function sendCallDeliveries(file: string, db: Db, where: string, seed: number): Promise<number> {
  const calls = db.$client
    .prepare(`SELECT a.pk AS appPk, a.app_id AS appId, c.session_id AS sessionId, c.start_at AS startAt, c.mode AS mode FROM calls c JOIN apps a ON a.pk = c.app_pk WHERE ${where} ORDER BY c.pk`)
    .all() as Array<{ appPk: number; appId: string; sessionId: string; startAt: number; mode: string | null }>;
  const sqlite = openIngestConnection(file);
  sqlite.pragma("synchronous = FULL");
  // Kept forever: they were received at the fixture's (past) times, which the 90-day pruning would drop at once.
  const ingestor = createIngestor(sqlite, { retainDeliveriesDays: 0 });
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  let stored = 0;
  const send = async (app: { appPk: number; appId: string }, body: unknown, receivedMs: number, pretty = false) => {
    const text = pretty ? JSON.stringify(body, null, 2) : JSON.stringify(body);
    const answer = await ingestor.accept({ pk: app.appPk, appId: app.appId }, new TextEncoder().encode(text), receivedMs);
    if (answer.status !== 200) throw new Error(`delivery refused: ${answer.status} ${JSON.stringify(answer.body)}`);
    stored++;
  };
  try {
    const orphans = calls.slice(0, 6).map((c, i) => ({ ...c, sessionId: `never-synced-${seed}-${i}`, startAt: c.startAt + 600 }));
    for (const [i, c] of [...calls, ...orphans].entries()) {
      const kind = c.mode === "meet" ? "meet" : "call";
      const init = { appId: c.appId };
      const received = (c.startAt + 30) * 1000;
      if (i % 3 === 0) await send(c, sessionStarted(init, c.sessionId, c.startAt, kind), received - 20_000);
      const people = 1 + Math.floor(r() * 3);
      for (let p = 0; p < people; p++) {
        const at = c.startAt + Math.floor(r() * 600);
        const [sdk, version] = pick(SDKS);
        const config: Record<string, unknown> = { platform: pick(PLATFORMS), sdk, call_version: version, is_audio_only: pick(FLAGS), is_video_muted: pick(FLAGS) };
        for (const k of Object.keys(config)) if (config[k] === undefined) delete config[k];
        const joinedAt = p === 2 ? undefined : r() < 0.5 ? at : at * 1000;
        const occupant = { name: `u${i}-${p}`, ...(joinedAt === undefined ? {} : { joined_at: joinedAt }), audio_call: pick(FLAGS) };
        const trigger = kind === "meet" ? "meeting_participant_joined" : "call_participant_joined";
        await send(c, envelope(init, trigger, { sessionId: c.sessionId, occupant, initial_config: config }, kind), (at + 5) * 1000, i % 4 === 1);
        if (p === 0 && i % 2 === 0) await send(c, participantLeft(init, c.sessionId, { name: occupant.name, joined_at: at, left_at: at + 90 }, kind), (at + 95) * 1000);
      }
      if (i % 5 === 0) await send(c, sessionEnded(init, c.sessionId, c.startAt, c.startAt + 900, [], kind), (c.startAt + 905) * 1000);
    }
  } finally {
    ingestor.close();
    sqlite.close();
  }
  return stored;
}
