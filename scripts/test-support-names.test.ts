import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Test-support files (helpers that tests import or spawn) are named `test-<what>.ts`, or
 * live in lib/testing/ (issue 28: five schemes had grown). The files below still carry an
 * older scheme: they sit in folders other work was rewriting when the scheme was chosen,
 * and are renamed there (take a renamed one off the list); it only shrinks.
 */
const NOT_YET_RENAMED = new Set([
  "e2e/fixture.ts", // Playwright's own word for it
]);
const OTHER_SCHEMES = /(^|[./-])(testing|fixtures?|parity-[\w-]+)\.tsx?$|\.fixture\.tsx?$/;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (name === "node_modules" || name.startsWith(".")) return [];
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

describe("test-support file names", () => {
  it("follow test-<what>.ts, but for the files not yet renamed", () => {
    const root = process.cwd();
    const found = ["app", "bench", "components", "e2e", "lib", "scripts"]
      .flatMap((d) => files(path.join(root, d)))
      .map((f) => path.relative(root, f).split(path.sep).join("/"))
      .filter((f) => !/\.(test|spec)\.tsx?$/.test(f) && !path.basename(f).startsWith("test-") && OTHER_SCHEMES.test(path.basename(f)));
    expect(found.filter((f) => !NOT_YET_RENAMED.has(f))).toEqual([]);
  });
});
