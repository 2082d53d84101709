import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPORT_NAMES, REPORT_REGISTRY, REPORT_ROUTES, reportRoute } from "./report-registry";
import { REPORT_CSV_WRITERS } from "./report-csv-writers";

/**
 * The table of reports and the route files of app/api/v1, held together both ways: every
 * route file that serves a report is the table's route of that name, and every report of
 * the table has its route file. A report added to one and not the other fails here.
 */
const API = path.join(process.cwd(), "app", "api", "v1");

function routeFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? routeFiles(path.join(dir, e.name)) : e.name === "route.ts" ? [path.join(dir, e.name)] : [],
  );
}

/** Route path → the report its file hands to handleReport (route files that serve no report are left out). */
function servedReports(): Map<string, string> {
  const served = new Map<string, string>();
  for (const file of routeFiles(API)) {
    const source = readFileSync(file, "utf8");
    const names = [...source.matchAll(/handleReport\(request, "([^"]+)"\)/g)].map((m) => m[1]!);
    if (names.length === 0) continue;
    expect(names, file).toHaveLength(1);
    const route = "/" + path.relative(process.cwd(), path.dirname(file)).split(path.sep).slice(1).join("/");
    served.set(route, names[0]!);
  }
  return served;
}

describe("the table of reports", () => {
  it("names each route file's report at that file's path", () => {
    const served = servedReports();
    expect(served.size).toBeGreaterThan(0);
    for (const [route, name] of served) expect(REPORT_ROUTES[route], route).toBe(name);
  });

  it("has a route file for every report, handing it that report", () => {
    const served = servedReports();
    for (const name of REPORT_NAMES) expect(served.get(reportRoute(name)), name).toBe(name);
    expect(served.size).toBe(REPORT_NAMES.length);
  });

  it("gives the fast path and the CSV writers every report, each once", () => {
    expect(Object.values(REPORT_ROUTES).sort()).toEqual([...REPORT_NAMES].sort());
    expect(new Set(REPORT_NAMES.map((n) => REPORT_REGISTRY[n].path)).size).toBe(REPORT_NAMES.length);
    for (const name of REPORT_NAMES) {
      expect(REPORT_CSV_WRITERS[name].name).toBe(name);
      expect(REPORT_CSV_WRITERS[name].csv.kind).toBe(REPORT_REGISTRY[name].csv.kind);
      expect(REPORT_CSV_WRITERS[name].csv.columns).toBe(REPORT_REGISTRY[name].csv.columns);
    }
  });
});
