import { describe, expect, it } from "vitest";
import { HttpError, notFound, toErrorResponse } from "./errors";

describe("toErrorResponse", () => {
  it("maps a known error to its status and body, anything else to a bare 500", async () => {
    const res = toErrorResponse(notFound('app "x" not found'));
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: "not_found", message: 'app "x" not found' } });
    const boom = toErrorResponse(new Error("SQLITE_CORRUPT at /secret/path"));
    expect(boom.status).toBe(500);
    expect(await boom.text()).not.toContain("SQLITE");
  });

  it("recognises an HttpError made by another copy of this module (Next bundle vs server)", async () => {
    // What a second copy of the class produces: an Error carrying the same global brand.
    const foreign = Object.assign(new Error("app \"a\" not found"), { name: "HttpError", status: 404, code: "not_found" });
    (foreign as unknown as Record<symbol, boolean>)[Symbol.for("callboard.HttpError")] = true;
    expect(foreign instanceof HttpError).toBe(true);
    expect(toErrorResponse(foreign).status).toBe(404);
    expect(new Error("plain") instanceof HttpError).toBe(false);
  });
});
