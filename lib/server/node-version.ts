/**
 * The Node versions Callboard runs on, checked by scripts/server.ts before anything else loads. lib/server/gzip-pieces.ts needs `zlib.crc32`, which came in Node
 * 20.15 and 22.2 (Node 21 and 22.0–22.1 lack it); better-sqlite3 12 is built for Node 20+.
 * package.json's `engines` says the same (a test holds them together).
 */
export const NODE_ENGINES = "^20.15.0 || >=22.2.0";

type Version = [major: number, minor: number, patch: number];

function parse(version: string): Version | undefined {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

function atLeast(v: Version, min: Version): boolean {
  for (let i = 0; i < 3; i++) if (v[i] !== min[i]) return v[i] > min[i];
  return true;
}

/** Why this Node cannot run Callboard (a message for the operator), or undefined when it can. */
export function nodeVersionProblem(version: string = process.version): string | undefined {
  const v = parse(version);
  const ok = v !== undefined && ((v[0] === 20 && atLeast(v, [20, 15, 0])) || atLeast(v, [22, 2, 0]));
  if (ok) return undefined;
  return `Callboard needs Node ${NODE_ENGINES.replace(" || ", " or ")} (it uses zlib.crc32); this is Node ${version}. Install a newer Node (20 LTS from 20.15, or 22.2+) and start again.`;
}
