import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Comments that name a file must name one that exists (issue 28: several pointed at
 * files moved or renamed long before). Two checks over every comment line of the code
 * and README.md: a path from the repository's root (`lib/ingest/webhook-handler.ts`) must exist; a
 * bare file name (`store.ts`) must be the name of some file of the repository. Decision
 * records are left out: they say what the code was when they were written.
 */
const ROOT = process.cwd();
const FOLDERS = ["app", "bench", "components", "db", "e2e", "lib", "scripts"];
const EXT = "(?:tsx|ts|mjs|css|md|sql|json)";
const ROOTED = new RegExp(`(?<![\\w@/.-])((?:app|bench|components|db|docs|e2e|lib|scripts)/[\\w\\[\\]().@/-]+\\.${EXT})(?![\\w])`, "g");
const BARE = /(?<![\w@/.-])([\w-]+(?:\.[\w-]+)*\.(?:tsx|ts|mjs|css))(?![\w])/g;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (name === "node_modules" || name.startsWith(".")) return [];
    if (statSync(p).isDirectory()) return sources(p);
    return /\.(tsx?|mjs|css)$/.test(name) ? [p] : [];
  });
}

const files = FOLDERS.filter((f) => existsSync(path.join(ROOT, f))).flatMap((f) => sources(path.join(ROOT, f)));
const names = new Set(files.map((f) => path.basename(f)));
// The root's own files (configs) may be named bare too.
for (const name of readdirSync(ROOT)) names.add(name);

function commentLines(file: string): Array<[number, string]> {
  const lines = readFileSync(file, "utf8").split("\n");
  return lines.flatMap((line, i): Array<[number, string]> => {
    const t = line.trim();
    return t.startsWith("*") || t.startsWith("//") || t.startsWith("/*") || line.includes(" // ") ? [[i + 1, line]] : [];
  });
}

describe("file names in comments", () => {
  it("name files that exist", () => {
    const broken: string[] = [];
    for (const file of files) {
      const rel = path.relative(ROOT, file);
      for (const [n, line] of commentLines(file)) {
        for (const m of line.matchAll(ROOTED)) if (!m[1]!.includes("*") && !existsSync(path.join(ROOT, m[1]!))) broken.push(`${rel}:${n}: ${m[1]}`);
        for (const m of line.matchAll(BARE)) if (!names.has(m[1]!) && !m[1]!.endsWith(".d.ts")) broken.push(`${rel}:${n}: ${m[1]}`);
      }
    }
    const readme = readFileSync(path.join(ROOT, "README.md"), "utf8").split("\n");
    readme.forEach((line, i) => {
      for (const m of line.matchAll(ROOTED)) if (!m[1]!.includes("*") && !existsSync(path.join(ROOT, m[1]!))) broken.push(`README.md:${i + 1}: ${m[1]}`);
    });
    expect(broken).toEqual([]);
  });
});
