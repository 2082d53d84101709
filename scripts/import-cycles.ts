/**
 * `npx tsx scripts/import-cycles.ts [folder …]`: the import cycles among the project's
 * TypeScript modules (default: lib), each printed as a chain of files; exits 1 when there
 * is one. Type-only imports count as well unless `--runtime` is given (they vanish at
 * run time, but still tie two modules together for a reader).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

const root = process.cwd();
const args = process.argv.slice(2);
const runtimeOnly = args.includes("--runtime");
const folders = args.filter((a) => !a.startsWith("--"));

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (name === "node_modules" || name.startsWith(".")) return [];
    if (statSync(p).isDirectory()) return files(p);
    return /\.tsx?$/.test(name) && !/\.(test|spec)\.tsx?$/.test(name) ? [p] : [];
  });
}

function resolve(from: string, spec: string): string | undefined {
  const base = spec.startsWith("@/") ? path.join(root, spec.slice(2)) : spec.startsWith(".") ? path.resolve(path.dirname(from), spec) : undefined;
  if (!base) return undefined;
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, path.join(base, "index.ts"), path.join(base, "index.tsx")]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}

const IMPORT = /(?:^|\n)\s*(import|export)\s+(type\s+)?(?:[^'"]*?\sfrom\s+)?["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

function edges(file: string): string[] {
  const src = readFileSync(file, "utf8");
  const out: string[] = [];
  for (const m of src.matchAll(IMPORT)) {
    if (runtimeOnly && m[2]) continue;
    const target = resolve(file, m[3] ?? m[4]!);
    if (target) out.push(target);
  }
  return out;
}

const nodes = (folders.length > 0 ? folders : ["lib"]).flatMap((f) => files(path.join(root, f)));
const graph = new Map(nodes.map((n) => [n, edges(n)]));

// Tarjan's strongly connected components: every component of more than one module is a cycle.
let index = 0;
const idx = new Map<string, number>();
const low = new Map<string, number>();
const stack: string[] = [];
const onStack = new Set<string>();
const cycles: string[][] = [];
function visit(v: string): void {
  idx.set(v, index);
  low.set(v, index++);
  stack.push(v);
  onStack.add(v);
  for (const w of graph.get(v) ?? []) {
    if (!graph.has(w)) continue;
    if (!idx.has(w)) {
      visit(w);
      low.set(v, Math.min(low.get(v)!, low.get(w)!));
    } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
  }
  if (low.get(v) === idx.get(v)) {
    const scc: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      scc.push(w);
    } while (w !== v);
    if (scc.length > 1) cycles.push(scc);
  }
}
for (const n of graph.keys()) if (!idx.has(n)) visit(n);

for (const scc of cycles) console.log(`cycle: ${scc.map((f) => path.relative(root, f)).sort().join(" <-> ")}`);
console.log(cycles.length === 0 ? "no import cycles" : `${cycles.length} import cycle(s)`);
process.exit(cycles.length === 0 ? 0 : 1);
