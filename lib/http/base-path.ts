/**
 * `BASE_PATH`: Callboard served under a sub-path (e.g. `/callboard`) behind a reverse
 * proxy that forwards that prefix unchanged. Next.js fixes its basePath at build time
 * (next.config.ts reads BASE_PATH there and hands it to the browser bundle as
 * NEXT_PUBLIC_BASE_PATH); `npm start` refuses to serve a build made for another base
 * path (lib/server/build-info.ts). See docs/decisions/0037-behind-a-reverse-proxy.md.
 *
 * Links (`<Link>`), `redirect()` and static assets get the prefix from Next. What Next
 * does not see gets it here: the browser's fetch() of an API route, a plain `<a>`
 * download, next-auth's routes and cookie path, the lean node:http paths.
 *
 * No imports: next.config.ts, the browser and the server all load this file.
 */

const SEGMENTS = /^(\/[A-Za-z0-9._~-]+)+$/;

/** Why a BASE_PATH value is refused, or undefined. */
export function basePathProblem(value: string): string | undefined {
  const v = value.trim().replace(/\/+$/, "");
  if (v === "") return undefined;
  if (!SEGMENTS.test(v) || v.split("/").some((s) => s === "." || s === "..")) {
    return "must be a path such as /callboard (letters, digits, . _ ~ - between slashes)";
  }
  return undefined;
}

/** "" (served at the root) or `/a/b`: a leading slash, no trailing one. */
export function normaliseBasePath(value: string | undefined): string {
  const v = (value ?? "").trim().replace(/\/+$/, "");
  const problem = basePathProblem(v);
  if (problem) throw new Error(`BASE_PATH ${problem}`);
  return v;
}

/** The base path this build was made with (inlined into the bundles by next.config.ts). */
export const BUILD_BASE_PATH = process.env.NEXT_PUBLIC_BASE_PATH ?? "";

/** An app path (`/api/v1/...`) as the browser must ask for it. Full URLs and relative ones pass as they are. */
export function withBasePath(path: string, basePath: string = BUILD_BASE_PATH): string {
  return path.startsWith("/") && !path.startsWith("//") ? basePath + path : path;
}

/** The app path of a request path under `basePath`, or undefined when it is outside it. */
export function stripBasePath(path: string, basePath: string): string | undefined {
  if (basePath === "") return path;
  if (path === basePath) return "/";
  const rest = path.startsWith(basePath) ? path.slice(basePath.length) : undefined;
  return rest !== undefined && (rest.startsWith("/") || rest.startsWith("?")) ? (rest.startsWith("?") ? `/${rest}` : rest) : undefined;
}
