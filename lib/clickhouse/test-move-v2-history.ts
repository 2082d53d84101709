import type { ClickHouse } from "./client";
import { callRow, callTombstone, type CallFact } from "./rows";
import { decodeClosed } from "./schema-v2";

/** The v1 history the tests of the move to v2 move (move-v2*.integration.test.ts), and the answers both schemas must agree on. */

const MONTH0 = Date.UTC(2024, 0, 1) / 1000;
const DAY = 86_400;

/** The v1 history: 600 calls over 20 months, some re-synced (one moves its start a month on), a few deleted. */
export function history(): Array<Record<string, unknown>> {
  const rows: Array<Record<string, unknown>> = [];
  for (let i = 0; i < 600; i++) {
    const appPk = 1 + (i % 3);
    const start = MONTH0 + Math.floor(i / 30) * 31 * DAY + (i % 30) * 3_600 * 7;
    const uids = [`u${i % 17}`, `u${(i * 7) % 23}`, ...(i % 5 === 0 ? [`u${i % 17}`] : []), ...(i % 11 === 0 ? ["o'brien\\"] : [])];
    const fact = (version: number, more: Partial<CallFact> = {}): CallFact => ({
      appPk, sessionId: `s-${i}`, version, mid: null, type: i % 13 === 0 ? "screen" : i % 2 ? "audio" : "video", mode: i % 4 ? "call" : "meet",
      status: "ended", initiator: "u0", receiver: "u1", receiverType: i % 9 === 0 ? null : "user", initiatedAt: start - 10, startedAt: start, endedAt: start + 60,
      startAt: start, platformHasRecording: i % 6 === 0, totalAudioMinutes: (i % 10) + 0.125, totalVideoMinutes: i % 3, totalDurationMinutes: 1 + (i % 10),
      durationSeconds: 60 + i, totalParticipants: uids.length, source: "sync", contentHash: null, raw: `{"sessionId":"s-${i}"}`, firstSeenMs: 1, updatedMs: version,
      arrival: i + 1,
      participants: uids.map((uid, seq) => ({
        seq: seq + 1, uid, state: seq === 1 && i % 3 === 0 ? "unanswered" : "left", isJoined: !(seq === 1 && i % 3 === 0), totalAudioMinutes: 0.5, totalVideoMinutes: 0.25,
        totalDurationMinutes: 0.75, deviceId: `d${seq}`, joinedAt: start, leftAt: start + 30, mid: null, raw: null,
      })),
      ...more,
    });
    rows.push(callRow(fact(1)));
    // Re-synced: a newer version; every 10th moves its start 40 days on (another month), with fewer participants.
    if (i % 4 === 0) rows.push(callRow(fact(2, i % 10 === 0 ? { startAt: start + 40 * DAY, startedAt: start + 40 * DAY, totalAudioMinutes: 9, participants: [] , totalParticipants: 0 } : { status: "rejected" })));
    if (i % 37 === 0) rows.push(callTombstone(appPk, `s-${i}`, 3));
  }
  return rows;
}

/** What v1 holds (FINAL) and what v2 answers (signed sums, no FINAL): they must agree. */
export async function answers(ch: ClickHouse, db: string) {
  const t = (name: string) => `\`${db}\`.\`${name}\``;
  const v1 = {
    byMonth: await ch.rows(`SELECT app_pk AS app, toYYYYMM(toDateTime(start_at)) AS m, ifNull(type, '-') AS type, count() AS calls, sum(total_audio_minutes_x1000) AS audio
      FROM ${t("calls")} FINAL WHERE deleted = 0 GROUP BY app, m, type ORDER BY app, m, type`),
    byUid: await ch.rows(`SELECT app_pk AS app, uid, sum(occ = 1) AS calls, sum(pj) AS joined, sum(pa) AS audio
      FROM ${t("calls")} FINAL ARRAY JOIN p_uid AS uid, arrayEnumerateUniq(p_uid) AS occ, p_is_joined AS pj, p_total_audio_minutes_x1000 AS pa
      WHERE deleted = 0 GROUP BY app, uid ORDER BY app, uid`),
  };
  const type = `ifNull(${decodeClosed("type")}, '-')`;
  const v2 = {
    byMonth: await ch.rows(`SELECT app_pk AS app, toYYYYMM(start_at) AS m, ${type} AS type, sum(sign) AS calls, sum(sign * total_audio_minutes_x1000) AS audio
      FROM ${t("calls_v2")} GROUP BY app, m, type HAVING calls != 0 ORDER BY app, m, type`),
    byUid: await ch.rows(`SELECT app_pk AS app, uid, sum(sign * first_of_uid) AS calls, sum(sign * is_joined) AS joined, sum(sign * total_audio_minutes_x1000) AS audio
      FROM ${t("participants_v2")} GLOBAL ALL INNER JOIN (SELECT DISTINCT app_pk, uid_code, uid FROM ${t("uids")}) AS u USING (app_pk, uid_code)
      GROUP BY app, uid HAVING calls != 0 ORDER BY app, uid`),
  };
  const monthly = {
    byMonth: await ch.rows(`SELECT app_pk AS app, toYYYYMM(month) AS m, ${type} AS type, sum(calls) AS calls, sum(total_audio_minutes_x1000) AS audio
      FROM ${t("calls_by_month")} GROUP BY app, m, type HAVING calls != 0 ORDER BY app, m, type`),
    byUid: v2.byUid,
  };
  return { v1, v2, monthly };
}

