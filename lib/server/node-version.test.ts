import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { NODE_ENGINES, nodeVersionProblem } from "./node-version";

describe("the Node version Callboard needs (issue 27, item 9)", () => {
  it.each(["v20.15.0", "v20.19.5", "v22.2.0", "v22.11.0", "v24.1.0"])("runs on %s", (v) => {
    expect(nodeVersionProblem(v)).toBeUndefined();
  });

  it.each(["v20.12.0", "v20.14.9", "v21.7.3", "v22.1.0", "v18.20.4", "nonsense"])("refuses %s with the version it needs", (v) => {
    const problem = nodeVersionProblem(v);
    expect(problem).toContain("^20.15.0 or >=22.2.0");
    expect(problem).toContain(v);
  });

  it("agrees with package.json's engines and the README", () => {
    const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { engines: { node: string } };
    expect(pkg.engines.node).toBe(NODE_ENGINES);
    expect(readFileSync("README.md", "utf8")).toContain("Node 20.15+ (or 22.2+)");
  });

  it("the server refuses to start on an older Node, with a clear message and exit code 1", () => {
    // A preload that makes this Node say it is 20.14 (the last 20.x without zlib.crc32).
    const dir = mkdtempSync(path.join(tmpdir(), "callboard-node-version-"));
    try {
      const preload = path.join(dir, "old-node.cjs");
      writeFileSync(preload, `Object.defineProperty(process, "version", { value: "v20.14.0" });\n`);
      const r = spawnSync(path.join("node_modules", ".bin", "tsx"), ["scripts/server.ts"], {
        env: { ...process.env, NODE_OPTIONS: `--require ${preload}`, DATABASE_PATH: path.join(dir, "never.db"), PORT: "1" },
        encoding: "utf8",
        timeout: 60_000,
      });
      expect(r.status).toBe(1);
      expect(r.stderr).toContain("Callboard needs Node ^20.15.0 or >=22.2.0");
      expect(r.stderr).toContain("v20.14.0");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
