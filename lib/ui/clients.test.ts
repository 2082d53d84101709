import { describe, expect, it } from "vitest";
import { clientTables } from "./clients";

describe("clients per dimension", () => {
  it("puts each app's share side by side, most used first and unknown last", () => {
    const t = clientTables([
      { app: "b", dimension: "platform", value: "unknown", sessions: 9, calls: 3, share: 0.5 },
      { app: "b", dimension: "platform", value: "web", sessions: 9, calls: 3, share: 0.5 },
      { app: "a", dimension: "platform", value: "android", sessions: 2, calls: 1, share: 0.2 },
      { app: "a", dimension: "platform", value: "web", sessions: 8, calls: 4, share: 0.8 },
      { app: "a", dimension: "media", value: "video", sessions: 10, calls: 4, share: 1 },
    ]);
    expect(t.map((x) => x.dimension)).toEqual(["platform", "media"]);
    expect(t[0].apps).toEqual(["a", "b"]);
    expect(t[0].rows.map((r) => [r.value, r.total])).toEqual([["web", 17], ["android", 2], ["unknown", 9]]);
    expect(t[0].rows[1].byApp.b).toBeUndefined();
  });
});
