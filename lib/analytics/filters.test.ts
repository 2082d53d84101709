import { describe, expect, it } from "vitest";
import { HttpError } from "@/lib/http/errors";
import { parseFilters } from "./filters";

const bad = (q: string): HttpError => {
  try {
    parseFilters(new URLSearchParams(q));
  } catch (e) {
    return e as HttpError;
  }
  throw new Error(`accepted ${q}`);
};

describe("parseFilters", () => {
  it("parses every filter", () => {
    const f = parseFilters(new URLSearchParams("app=a&app=b&type=video&mode=meet&status=ended&receiverType=group&hasRecording=true&uid=a%2Cb&participantsCount=3&from=10&to=20&tz=Asia%2FKolkata&page=2&perPage=1000&sort=minutes&order=asc&format=csv"));
    expect(f).toMatchObject({ apps: ["a", "b"], type: "video", mode: "meet", status: "ended", receiverType: "group", hasRecording: true, uid: "a,b", participantsCount: 3, from: 10, to: 20, tz: "Asia/Kolkata", page: 2, perPage: 1000, sort: "minutes", order: "asc", format: "csv" });
    expect(parseFilters({})).toMatchObject({ apps: [], tz: "UTC", page: 1, perPage: 50, sort: "start", order: "desc", format: "json" });
    expect(parseFilters({ app: ["x", "y"], type: "audio" })).toMatchObject({ apps: ["x", "y"], type: "audio" });
  });

  it.each([
    ["type=fax", "type", ["audio", "video"]],
    ["mode=webinar", "mode", ["call", "meet", "presenter"]],
    ["status=initiated", "status", ["ended", "ongoing", "rejected", "unanswered"]],
    ["receiverType=channel", "receiverType", ["user", "group"]],
    ["hasRecording=yes", "hasRecording", ["true", "false"]],
    ["participantsCount=two", "participantsCount", undefined],
    ["participantsCount=-1", "participantsCount", undefined],
    ["from=abc", "from", undefined],
    ["to=1.5", "to", undefined],
    ["from=20&to=10", "from", undefined],
    ["perPage=1001", "perPage", undefined],
    ["perPage=0", "perPage", undefined],
    ["page=0", "page", undefined],
    ["tz=Mars%2FOlympus", "tz", undefined],
    ["sort=name", "sort", ["start", "duration", "participants", "minutes"]],
    ["order=up", "order", ["asc", "desc"]],
    ["format=xml", "format", ["json", "csv"]],
    ["type=audio&type=video", "type", undefined],
    ["app=", "app", undefined],
    ["uid=", "uid", undefined],
  ])("%s → 400 naming %s", (q, parameter, allowed) => {
    const e = bad(q);
    expect(e).toBeInstanceOf(HttpError);
    expect(e.status).toBe(400);
    expect(e.code).toBe("invalid_parameter");
    expect(e.message.startsWith(`${parameter}:`)).toBe(true);
    expect(e.details?.parameter).toBe(parameter);
    if (allowed) {
      expect(e.details?.allowed).toEqual(allowed);
      for (const v of allowed) expect(e.message).toContain(v);
    }
  });
});
