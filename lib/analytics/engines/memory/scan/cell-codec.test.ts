import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { DURATION_BUCKETS, MODES, RECEIVER_TYPES, STATUSES, TYPES } from "../../../dims";
import { filters } from "../../../filters";
import { bucketOfCell, CELLS, cellFilter, cellSql, codeOf, DIMS, dimCode, dimsOfCell, labelOf, recordingOf } from "./cell-codec";

/**
 * The cell codec packs in SQL (the store's load) and unpacks in TypeScript (kernels,
 * reports): both are held here to one definition, written out independently — a code is
 * a value's index among the known values, else the next one; dims = t + 3m + 12s + 60r +
 * 180·rec; cell = dims + 360 × duration bucket.
 */
const sqlite = new Database(":memory:");
afterAll(() => sqlite.close());

const withOther = <T extends string>(values: readonly T[]) => [...values, null, "weird"];
const index = (values: readonly string[], v: string | null) => (v !== null && values.includes(v) ? values.indexOf(v) : values.length);
const durations = [0, 59, 60, 299, 300, 899, 900, 1799, 1800, 3599, 3600, 86_400];
const bucket = (s: number) => DURATION_BUCKETS.findIndex((b) => s < b.maxSeconds);

describe("cell codec", () => {
  it("packs every combination in SQL as written out here, and unpacks it in TypeScript", () => {
    const stmt = sqlite.prepare(`WITH c(type, mode, status, receiver_type, has_recording, duration_seconds) AS (VALUES (?, ?, ?, ?, ?, ?)) SELECT ${cellSql("c")} FROM c`).pluck();
    let seen = 0;
    for (const type of withOther(TYPES))
      for (const mode of withOther(MODES))
        for (const status of withOther(STATUSES))
          for (const rt of withOther(RECEIVER_TYPES))
            for (const rec of [0, 1])
              for (const d of [durations[(seen * 7) % durations.length]]) {
                const want = index(TYPES, type) + 3 * index(MODES, mode) + 12 * index(STATUSES, status) + 60 * index(RECEIVER_TYPES, rt) + 180 * rec + 360 * bucket(d);
                const cell = stmt.get(type, mode, status, rt, rec, d) as number;
                const tag = JSON.stringify([type, mode, status, rt, rec, d]);
                expect(cell, tag).toBe(want);
                expect(cell, tag).toBeLessThan(CELLS);
                const dims = dimsOfCell(cell);
                expect(dims, tag).toBeLessThan(DIMS);
                expect([dimCode(dims, "type"), dimCode(dims, "mode"), dimCode(dims, "status"), dimCode(dims, "receiverType")], tag).toEqual([
                  codeOf("type", type), codeOf("mode", mode), codeOf("status", status), codeOf("receiverType", rt),
                ]);
                expect(labelOf("status", dimCode(dims, "status")), tag).toBe(status !== null && (STATUSES as readonly string[]).includes(status) ? status : "other");
                expect(recordingOf(dims), tag).toBe(rec);
                expect(bucketOfCell(cell), tag).toBe(bucket(d));
                seen++;
              }
    expect(seen).toBe(4 * 5 * 6 * 4 * 2);
    for (const d of durations) expect(bucketOfCell(stmt.get("audio", "call", "ended", "user", 0, d) as number), String(d)).toBe(bucket(d));
  });

  it("keeps exactly the cells whose categories a filter names", () => {
    const cases = [
      filters(), filters({ type: "video" }), filters({ mode: "presenter", status: "unanswered" }), filters({ receiverType: "group", hasRecording: true }),
      filters({ hasRecording: false }), filters({ type: "audio", mode: "meet", status: "rejected", receiverType: "user", hasRecording: true }),
    ];
    for (const f of cases) {
      const table = cellFilter(f);
      for (let cell = 0; cell < CELLS; cell++) {
        const dims = cell % 360;
        const want =
          (f.type === undefined || dims % 3 === TYPES.indexOf(f.type)) &&
          (f.mode === undefined || Math.floor(dims / 3) % 4 === MODES.indexOf(f.mode)) &&
          (f.status === undefined || Math.floor(dims / 12) % 5 === STATUSES.indexOf(f.status)) &&
          (f.receiverType === undefined || Math.floor(dims / 60) % 3 === RECEIVER_TYPES.indexOf(f.receiverType)) &&
          (f.hasRecording === undefined || (dims >= 180) === f.hasRecording);
        expect(table[cell], `${JSON.stringify(f)} cell ${cell}`).toBe(want ? 1 : 0);
      }
    }
  });
});
