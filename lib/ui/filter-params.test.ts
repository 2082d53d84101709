import { describe, expect, it } from "vitest";
import { apiQuery, hasActiveFilters, loadFilters } from "./filter-params";
import { csvUrl, reportKey, reportUrl } from "./reports";

describe("filter params", () => {
  it("parses a page URL with the API's names and ignores bad values", () => {
    const v = loadFilters("?app=b&app=a&type=video&status=nope&tz=Mars/Base&from=100&participantsCount=3&page=2&sort=duration");
    expect(v.app).toEqual(["b", "a"]);
    expect(v.type).toBe("video");
    expect(v.status).toBeNull();
    expect(v.tz).toBe("UTC");
    expect(v.from).toBe(100);
    expect(v.participantsCount).toBe(3);
    expect(v.page).toBe(2);
    expect(v.sort).toBe("duration");
    expect(hasActiveFilters(v)).toBe(true);
    expect(hasActiveFilters(loadFilters(""))).toBe(false);
  });

  it("builds one canonical API query (the react-query key) from the values", () => {
    const a = apiQuery(loadFilters("?app=b&app=a&mode=meet&tz=Asia/Kolkata&hasRecording=true"));
    const b = apiQuery(loadFilters("?hasRecording=true&tz=Asia/Kolkata&mode=meet&app=a&app=b"));
    expect(a.toString()).toBe("app=a&app=b&mode=meet&hasRecording=true&tz=Asia%2FKolkata");
    expect(reportKey("daily", a)).toEqual(reportKey("daily", b));
    const paged = apiQuery(loadFilters("?page=3&order=asc&sort=minutes"), { perPage: 25 });
    expect(paged.toString()).toBe("page=3&perPage=25&sort=minutes&order=asc");
    expect(apiQuery(loadFilters("?from=200&to=100")).toString()).toBe("from=200");
  });

  it("keeps the heatmap drill-down's weekday and hour (0 kept, out of range dropped) in the API query", () => {
    const v = loadFilters("?weekday=0&hour=23&tz=Asia/Kathmandu&from=100&to=200");
    expect([v.weekday, v.hour]).toEqual([0, 23]);
    expect(hasActiveFilters({ ...loadFilters(""), hour: 0 })).toBe(true);
    expect(apiQuery(v).toString()).toBe("weekday=0&hour=23&from=100&to=200&tz=Asia%2FKathmandu");
    const bad = loadFilters("?weekday=7&hour=24");
    expect([bad.weekday, bad.hour]).toEqual([null, null]);
  });

  it("links the API route and its CSV with the same filters", () => {
    const q = apiQuery(loadFilters("?uid=u1&page=2"), { perPage: 50 });
    expect(reportUrl("participants", q)).toBe("/api/v1/usage/participants?uid=u1&page=2&perPage=50");
    expect(csvUrl("participants", q)).toBe("/api/v1/usage/participants?uid=u1&format=csv");
    expect(csvUrl("durations", new URLSearchParams())).toBe("/api/v1/insights/durations?format=csv");
  });
});
