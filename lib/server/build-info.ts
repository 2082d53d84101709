import { readFileSync } from "node:fs";
import path from "node:path";

/**
 * What `npm run build` fixed that `npm start` must agree with. Next.js bakes the base
 * path into the build (links, asset URLs, the browser bundle), while the server reads
 * next.config.ts again at start: a build made for one BASE_PATH served under another
 * gives pages whose every link and script is wrong. Refuse that at start, plainly.
 */
export class BuildMismatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BuildMismatchError";
  }
}

/** The folder `npm run build` writes and `npm start` serves (next.config.ts's distDir). */
export function buildDir(root = process.cwd()): string {
  return path.join(root, process.env.NEXT_DIST_DIR || ".next");
}

/** The build's base path ("" at the root), or undefined when there is no build to read (dev). */
export function builtBasePath(dir = buildDir()): string | undefined {
  try {
    const manifest = JSON.parse(readFileSync(path.join(dir, "routes-manifest.json"), "utf8")) as { basePath?: string };
    return manifest.basePath ?? "";
  } catch {
    return undefined;
  }
}

export function assertBuildServesBasePath(basePath: string, dir = buildDir()): void {
  const built = builtBasePath(dir);
  if (built === undefined || built === basePath) return;
  const shown = (v: string) => (v === "" ? "unset (the root)" : `"${v}"`);
  throw new BuildMismatchError(
    `BASE_PATH is ${shown(basePath)} but this build was made with BASE_PATH ${shown(built)}. ` +
      `Next.js fixes the base path when it builds: run \`BASE_PATH=${basePath} npm run build\`, then start again ` +
      `(or start with the BASE_PATH the build was made with).`,
  );
}
