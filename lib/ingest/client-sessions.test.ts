import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { joinFacts } from "@/lib/platform/client-session-facts";
import { isObject, toEpochSeconds } from "../platform/webhook-envelope";

/**
 * The ingest keeps what a join says in `client_sessions`, read from the parsed body in
 * TypeScript. Before that table, the clients report read the stored bodies with SQLite's
 * `json_extract` and normalised the values itself: the rows must say exactly what that
 * reading said, or the report would change for the same joins. Every kind of value a
 * platform may send, and bodies that are pretty-printed, nested oddly or not JSON.
 */
const VALUES: unknown[] = ["web", " Android ", "", 4, 4.5, 0, 1, true, false, null, "true", "1", "FALSE", { a: 1 }, [1, 2], "é\u0000x", 1_767_225_600_123, "1767225600"];

function bodies(): string[] {
  const out: string[] = [];
  VALUES.forEach((v, i) => {
    const w = VALUES[(i * 7 + 3) % VALUES.length];
    const data = { sessionId: "s", occupant: { name: "n", joined_at: i % 2 ? 1_767_225_600 + i : v, audio_call: w }, initial_config: { platform: v, sdk: w, call_version: v, is_audio_only: w, is_video_muted: v, start_recording_on_call_start: w } };
    out.push(JSON.stringify({ trigger: "call_participant_joined", data }), JSON.stringify({ trigger: "call_participant_joined", data }, null, 2));
  });
  out.push("not json", "[]", JSON.stringify({ data: [] }), JSON.stringify({ data: { occupant: [1], initial_config: "web" } }), JSON.stringify({ data: { initial_config: {} } }));
  return out;
}

// The normalisation the report applied to json_extract's values before the table existed.
const text = (v: unknown): string | null => (typeof v === "string" && v.trim() !== "" ? v.trim().toLowerCase() : typeof v === "number" ? String(v) : null);
const flag = (v: unknown): number | null => (v === "true" || v === 1 || v === "1" ? 1 : v === "false" || v === 0 || v === "0" ? 0 : null);

describe("a join's clients, as the ingest keeps them", () => {
  it("are what SQLite's json_extract read from the stored body", () => {
    const db = new Database(":memory:");
    const q = db.prepare(`SELECT json_extract(@b, '$.data.occupant.joined_at') AS joinedAt, json_extract(@b, '$.data.initial_config.platform') AS platform,
      json_extract(@b, '$.data.initial_config.sdk') AS sdk, json_extract(@b, '$.data.initial_config.call_version') AS version,
      json_extract(@b, '$.data.initial_config.is_audio_only') AS audioOnly, json_extract(@b, '$.data.occupant.audio_call') AS audioCall,
      json_extract(@b, '$.data.initial_config.is_video_muted') AS videoMuted, json_extract(@b, '$.data.initial_config.start_recording_on_call_start') AS rec`);
    for (const body of bodies()) {
      const x = (body === "not json" ? {} : q.get({ b: body })) as Record<string, unknown>;
      let data: unknown = null;
      try {
        const parsed = JSON.parse(body) as unknown;
        if (isObject(parsed)) data = parsed.data;
      } catch {
        // not JSON: says nothing
      }
      const got = joinFacts(1, "s", "call_participant_joined", data, 1_767_300_000_500);
      const joinedAt = toEpochSeconds(x.joinedAt ?? null);
      expect(got, body).toMatchObject({
        joinedAt, countedAt: joinedAt ?? 1_767_300_000, platform: text(x.platform), sdk: text(x.sdk), callVersion: text(x.version),
        isAudioOnly: flag(x.audioOnly), audioCall: flag(x.audioCall), isVideoMuted: flag(x.videoMuted), startRecordingOnCallStart: flag(x.rec),
      });
    }
    db.close();
  });
});
