import { describe, expect, it } from "vitest";
import { CliError, parseAppsList, parseCli, parseFault } from "./cli-args";
import { spawnEmulator } from "./test-emulator";

describe("CLI arguments", () => {
  it("parses apps, faults and quirks", () => {
    expect(parseAppsList("demo-sales:2000,demo-support:800:eu")).toEqual([{ appId: "demo-sales", count: 2000, region: "us" }, { appId: "demo-support", count: 800, region: "eu" }]);
    expect(parseFault("503:0.25:list")).toEqual({ kind: "503", route: "list", rate: 0.25 });
    expect(parseFault("truncate:every5")).toEqual({ kind: "truncate", route: "*", everyNth: 5 });
    expect(parseFault("hang:first2:get:demo")).toEqual({ kind: "hang", route: "get", firstN: 2, appId: "demo" });
    expect(parseFault("503:after4:list")).toEqual({ kind: "503", route: "list", afterN: 4 });
    for (const bad of ["418:0.1", "503:often", "503:0.1:nowhere"]) expect(() => parseFault(bad)).toThrow(CliError);
    expect(() => parseAppsList("x:lots")).toThrow(CliError);
    const cli = parseCli(["--port", "0", "--apps", "a:5", "--ignore-per-page", "25", "--order", "oldest", "--fault", "429:every3:list", "--rate-limit", "100"]);
    expect(cli.help).toBe(false);
    if (!cli.help) {
      expect(cli.options.quirks).toEqual({ ignorePerPage: 25, invalidRecords: false, order: "oldest", maxPerPage: 0, latencyMs: 0, nonConverging: "off" });
      expect(cli.options.faults?.rules).toEqual([{ kind: "429", route: "list", everyNth: 3 }]);
      expect(cli.options.faults?.rateLimitPerMinute).toBe(100);
    }
    expect(() => parseCli(["--order", "random"])).toThrow(CliError);
    const shaped = parseCli(["--mix", "big-meetings", "--latency", "120", "--max-per-page", "100"]);
    if (!shaped.help) {
      expect(shaped.options.mix).toBe("big-meetings");
      expect(shaped.options.quirks).toMatchObject({ latencyMs: 120, maxPerPage: 100 });
    }
    expect(() => parseCli(["--mix", "huge"])).toThrow(/--mix must be one of standard, platform/);
    expect(() => parseCli(["--latency=1.5"])).toThrow(CliError);
    const endless = parseCli(["--non-converging", "growing"]);
    expect(!endless.help && endless.options.quirks?.nonConverging).toBe("growing");
    expect(() => parseCli(["--non-converging", "sometimes"])).toThrow(CliError);
  });
});

describe("spawnEmulator", () => {
  it("runs the CLI as a child, prints one JSON line, is remote-controlled and stops", async () => {
    const emu = await spawnEmulator({ seed: 11, now: 1_780_000_000, apps: "x:50,y:10:eu", faults: ["503:first1:list"] });
    try {
      expect(emu.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(emu.apps.map((a) => [a.appId, a.region, a.calls])).toEqual([["x", "us", 50], ["y", "eu", 10]]);
      expect(emu.apps[0].callsUrl).toBe(`${emu.url}/x/v3`);
      expect(emu.apps[0].apiKey).toMatch(/^ak_[0-9a-f]{40}$/);
      expect(emu.management).toMatchObject({ url: `${emu.url}/management`, key: expect.any(String), secret: expect.any(String) });
      const get = () => fetch(`${emu.apps[0].callsUrl}/calls`, { headers: { apikey: emu.apps[0].apiKey } });
      expect((await get()).status).toBe(503);
      expect((await get()).status).toBe(200);
      expect(await emu.admin.truth("x")).toHaveLength(50);
      const log = await emu.admin.requests();
      expect(log.map((r) => r.status)).toEqual([503, 200]);
      expect(log[0].headers.apikey).toBe("<redacted>");
    } finally {
      await emu.stop();
    }
    expect(() => process.kill(emu.pid, 0)).toThrow();
  });

  it("fails fast with the child's stderr on bad arguments", async () => {
    await expect(spawnEmulator({ apps: "broken" })).rejects.toThrow(/--apps/);
  });
});
