import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { joinFactsOfBody } from "./clients";

/**
 * The ClickHouse engine reads join bodies with `joinFactsOfBody`, the in-memory engine
 * with SQLite's `json_extract`: both must see the same values, or the clients report
 * differs between engines. Every kind of value a platform may send, and bodies that are
 * pretty-printed, nested oddly or not JSON at all.
 */
const VALUES: unknown[] = ["web", " Android ", "", 4, 4.5, 0, 1, true, false, null, "true", "1", { a: 1 }, [1, 2], "é\u0000x"];

function bodies(): string[] {
  const out: string[] = [];
  VALUES.forEach((v, i) => {
    const w = VALUES[(i * 7 + 3) % VALUES.length];
    const data = { sessionId: "s", occupant: { name: "n", joined_at: i % 2 ? 1_767_225_600 + i : v, audio_call: w }, initial_config: { platform: v, sdk: w, call_version: v, is_audio_only: w, is_video_muted: v } };
    out.push(JSON.stringify({ trigger: "call_participant_joined", data }), JSON.stringify({ trigger: "call_participant_joined", data }, null, 2));
  });
  out.push("not json", "[]", JSON.stringify({ data: [] }), JSON.stringify({ data: { occupant: [1], initial_config: "web" } }), JSON.stringify({ data: { initial_config: {} } }));
  return out;
}

describe("join facts read from a body", () => {
  it("are what SQLite's json_extract reads from it", () => {
    const db = new Database(":memory:");
    const q = db.prepare(`SELECT json_extract(@b, '$.data.occupant.joined_at') AS joinedAt, json_extract(@b, '$.data.initial_config.platform') AS platform,
      json_extract(@b, '$.data.initial_config.sdk') AS sdk, json_extract(@b, '$.data.initial_config.call_version') AS version,
      json_extract(@b, '$.data.initial_config.is_audio_only') AS audioOnly, json_extract(@b, '$.data.occupant.audio_call') AS audioCall,
      json_extract(@b, '$.data.initial_config.is_video_muted') AS videoMuted`);
    for (const body of bodies()) {
      const want = body === "not json" ? { joinedAt: null, platform: null, sdk: null, version: null, audioOnly: null, audioCall: null, videoMuted: null } : q.get({ b: body });
      expect({ ...joinFactsOfBody(1, "s", 0, body), appPk: undefined, sessionId: undefined, receivedMs: undefined }, body).toEqual({ ...(want as object), appPk: undefined, sessionId: undefined, receivedMs: undefined });
    }
    db.close();
  });
});
