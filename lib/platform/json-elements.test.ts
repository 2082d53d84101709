import { describe, expect, it } from "vitest";
import { arrayMemberElements } from "./json-elements";

describe("arrayMemberElements", () => {
  it("returns each element's text exactly as written", () => {
    const text = `{ "meta": {"pagination": {"total": 2, "data": [9]}}, "data" : [ {"a": "x, \\"}] y", "b": [1, {"c": null}]} ,\n  {"uid": "=cmd|' /C calc'!A0", "n": -1.5e3}, 7, "s", null ] }`;
    const els = arrayMemberElements(text, "data");
    expect(els).toEqual([
      `{"a": "x, \\"}] y", "b": [1, {"c": null}]}`,
      `{"uid": "=cmd|' /C calc'!A0", "n": -1.5e3}`,
      "7",
      '"s"',
      "null",
    ]);
    expect(els!.map((e) => JSON.parse(e))).toEqual(JSON.parse(text).data);
  });

  it("handles escaped backslashes before a closing quote and unicode", () => {
    const data = [{ uid: "ends with \\", name: "Zoë 😀 \u0000", q: '"' }, { uid: "\\\\\\" }];
    const text = JSON.stringify({ data, meta: {} });
    expect(arrayMemberElements(text, "data")).toEqual(data.map((d) => JSON.stringify(d)));
  });

  it("slices JSON.stringify output to the same text as stringifying each element", () => {
    const data = Array.from({ length: 50 }, (_, i) => ({ sessionId: `s${i}`, participants: [{ uid: `u,${i}` }], x: [[], {}] }));
    expect(arrayMemberElements(JSON.stringify({ data }), "data")).toEqual(data.map((d) => JSON.stringify(d)));
    expect(arrayMemberElements(JSON.stringify({ data: [] }), "data")).toEqual([]);
  });

  it("returns undefined when there is no such array member", () => {
    expect(arrayMemberElements(`{"meta": {}}`, "data")).toBeUndefined();
    expect(arrayMemberElements(`{"data": {"a": 1}}`, "data")).toBeUndefined();
    expect(arrayMemberElements(`[1, 2]`, "data")).toBeUndefined();
    expect(arrayMemberElements(`{"data": [1, 2`, "data")).toBeUndefined();
    expect(arrayMemberElements(`{"data": [1], "meta": {}, "data": [2]}`, "data")).toBeUndefined();
  });

  it("slices the bytes of a buffer view, multi-byte characters included", () => {
    const data = [{ uid: "Zoë", n: 1 }, { uid: "李雷", q: "\u00e9" }, { uid: "plain" }];
    const page = Buffer.from(`xxxx${JSON.stringify({ data, meta: { n: 3 } })}`, "utf8");
    const view = page.subarray(4); // not at the start of its ArrayBuffer
    expect(arrayMemberElements(view, "data")).toEqual(data.map((d) => JSON.stringify(d)));
  });
});
