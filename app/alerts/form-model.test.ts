import { describe, expect, it } from "vitest";
import type { RuleView } from "@/lib/alerts/rules";
import { ruleSchema } from "@/lib/alerts/schema";
import { EMPTY_FORM, formToBody, ruleToForm } from "./form-model";

describe("rule form ↔ API body", () => {
  it("a filled form is a valid rule with only the filters that were set", () => {
    const body = formToBody(
      { ...EMPTY_FORM, name: "Video drops", apps: ["acme"], type: "video", hasRecording: "false", participantsCount: "2", destinationUrl: " https://hooks.example/x ", allowPrivate: false },
      false,
    );
    expect(body).toEqual({
      name: "Video drops", enabled: true, metric: "unansweredRate", windowSeconds: 900, condition: { op: "above", value: 20 }, minCalls: 10,
      filters: { app: ["acme"], type: "video", hasRecording: false, participantsCount: 2 }, destination: { url: "https://hooks.example/x", allowPrivate: false },
    });
    expect(ruleSchema.safeParse(body).success).toBe(true);
  });

  it("a change condition carries its percent and direction; text in a number field reaches the API as text", () => {
    const body = formToBody({ ...EMPTY_FORM, name: "x", op: "change", percent: "35", direction: "down", minCalls: "" }, false);
    expect(body).toMatchObject({ condition: { op: "change", percent: 35, direction: "down" }, minCalls: 0, destination: null });
    expect(formToBody({ ...EMPTY_FORM, value: "lots" }, false).condition).toEqual({ op: "above", value: "lots" });
  });

  it("editing keeps the stored destination unless a new URL is given or it is removed", () => {
    expect(formToBody({ ...EMPTY_FORM, name: "x" }, true)).not.toHaveProperty("destination");
    expect(formToBody({ ...EMPTY_FORM, name: "x", removeDestination: true, destinationUrl: "https://a.example" }, true).destination).toBeNull();
    expect(formToBody({ ...EMPTY_FORM, name: "x", destinationUrl: "https://a.example", allowPrivate: true }, true).destination).toEqual({ url: "https://a.example", allowPrivate: true });
  });

  it("a rule read back into the form gives the same rule", () => {
    const rule = {
      name: "Rejected", enabled: false, metric: "rejectedRate", windowSeconds: 3600, condition: { op: "change", percent: 50, direction: "up" }, minCalls: 25,
      filters: { app: ["a", "b"], mode: "meet", status: "ended", receiverType: "group", uid: "u1", hasRecording: true, participantsCount: 3 },
      destination: { origin: "https://hooks.example", hint: "…abcd", allowPrivate: true },
    } as unknown as RuleView;
    const { destination: _d, ...body } = formToBody(ruleToForm(rule), true) as Record<string, unknown>;
    expect(_d).toBeUndefined();
    expect(body).toEqual({ name: rule.name, enabled: false, metric: "rejectedRate", windowSeconds: 3600, condition: rule.condition, minCalls: 25, filters: rule.filters });
  });
});
