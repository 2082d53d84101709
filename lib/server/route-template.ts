import { readdirSync } from "node:fs";
import path from "node:path";

/**
 * A request's route as its template (`/api/v1/calls/[sessionId]`), never its raw path:
 * the access log and the metrics label requests by it, and a label made of raw paths
 * (session ids, app ids, anything a client types) would grow without bound. The
 * templates are the App Router's own, read from the `app/` folder once at start (route
 * groups `(x)` dropped, private `_x` folders skipped), plus the paths the server answers
 * in front of Next. A path no template matches is `(unmatched)`.
 */
export const UNMATCHED = "(unmatched)";

/** Answered by lib/server/start.ts before Next; not in `app/`. */
const SERVER_ROUTES = ["/metrics", "/api/health/live"];

type Segment = { kind: "static"; name: string } | { kind: "param" } | { kind: "catchAll"; optional: boolean };

interface Template {
  route: string;
  segments: Segment[];
}

function segmentOf(name: string): Segment {
  if (/^\[\[\.\.\..+\]\]$/.test(name)) return { kind: "catchAll", optional: true };
  if (/^\[\.\.\..+\]$/.test(name)) return { kind: "catchAll", optional: false };
  if (/^\[.+\]$/.test(name)) return { kind: "param" };
  return { kind: "static", name };
}

function templateOf(route: string): Template {
  const parts = route.split("/").filter(Boolean);
  return { route, segments: parts.map(segmentOf) };
}

/** The routes (`page.tsx`, `route.ts`) under an App Router folder, as templates. */
export function appRoutes(appDir: string): string[] {
  const routes: string[] = [];
  const walk = (dir: string, prefix: string[]) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    if (entries.some((e) => e.isFile() && /^(page|route)\.(tsx?|jsx?)$/.test(e.name))) routes.push(`/${prefix.join("/")}`);
    for (const e of entries) {
      if (!e.isDirectory() || e.name.startsWith("_") || e.name.startsWith("@")) continue;
      const group = /^\(.*\)$/.test(e.name);
      walk(path.join(dir, e.name), group ? prefix : [...prefix, e.name]);
    }
  };
  walk(appDir, []);
  return [...new Set(routes)];
}

/** Static segments win over `[param]`, which wins over a catch-all, as in Next's router. */
function rank(t: Template): number[] {
  return t.segments.map((s) => (s.kind === "static" ? 0 : s.kind === "param" ? 1 : 2));
}

function matches(segments: Segment[], parts: string[]): boolean {
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]!;
    if (s.kind === "catchAll") return s.optional || parts.length > i;
    const part = parts[i];
    if (part === undefined) return false;
    if (s.kind === "static" && s.name !== part) return false;
  }
  return parts.length === segments.length;
}

const MEMO_PATHS = 4096;

export type RouteResolver = (url: string | undefined) => string;

/** A resolver over the given routes (the app folder's and the server's own). */
export function createRouteResolver(routes: string[]): RouteResolver {
  const templates = [...new Set([...routes, ...SERVER_ROUTES])].map(templateOf);
  templates.sort((a, b) => {
    const ra = rank(a);
    const rb = rank(b);
    for (let i = 0; i < Math.min(ra.length, rb.length); i++) if (ra[i] !== rb[i]) return ra[i]! - rb[i]!;
    return rb.length - ra.length;
  });
  const resolve = (pathname: string): string => {
    if (pathname.startsWith("/_next/")) return "/_next/[...asset]";
    const parts = pathname.split("/").filter(Boolean);
    for (const t of templates) if (matches(t.segments, parts)) return t.route;
    return UNMATCHED;
  };
  // The same few paths come again and again (each app's webhook URL, the reports): a
  // bounded memo spares the walk over the templates on the hot path.
  const seen = new Map<string, string>();
  return (url) => {
    const raw = url ?? "/";
    const q = raw.indexOf("?");
    const pathname = q === -1 ? raw : raw.slice(0, q);
    let route = seen.get(pathname);
    if (route === undefined) {
      route = resolve(pathname);
      if (seen.size >= MEMO_PATHS) seen.clear();
      seen.set(pathname, route);
    }
    return route;
  };
}
