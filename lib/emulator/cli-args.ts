// Command-line parsing for scripts/emulator.ts, kept here so it is unit-testable.
import { parseArgs } from "node:util";
import { FAULT_KINDS, FAULT_ROUTES, type FaultConfig, type FaultRule } from "./faults";
import { NON_CONVERGING, type NonConverging } from "./non-converging";
import type { EmulatorOptions } from "./server";
import type { EmulatorAppSpec, ListOrder } from "./state";
import { DATA_MIX_NAMES, isDataMixName } from "./mixes";
import { isSessionIdOrder, SESSION_ID_ORDERS } from "./session-ids";
import { REGIONS, type Region } from "./types";

export const CLI_USAGE = `Usage: tsx scripts/emulator.ts [options]
  --port N               listen port on 127.0.0.1 (default 4010; 0 = any free port)
  --seed N               data seed (default 42)
  --apps LIST            id:count[:region],... (default demo-sales:2000,demo-support:800)
  --months N             history length in 30-day months (default 6)
  --now EPOCH            end of the generated history, epoch seconds (default: now)
  --management-key K     multi-tenancy key (default derived from the seed)
  --management-secret S  multi-tenancy secret (default derived from the seed)
  --ignore-per-page N    always serve pages of N calls, whatever perPage says
  --invalid-records      serve a few unparseable records
  --order O              newest | oldest | shuffled (default newest)
  --non-converging M     growing | repeating: a list that never ends (total_pages = page + 5)
  --max-meeting-size N   largest meeting, initiator included (default 12; min 3)
  --prerender            render every record's JSON at start (less CPU per page; benchmarks)
  --mix NAME             data shape: standard | platform | heavy-users | light-users | big-meetings
                         (default standard; see lib/emulator/mixes.ts)
  --session-ids ORDER    time | random: ids that follow time (v1.<region>.<app>.<time>…,
                         default) or random UUIDs, every other field unchanged
  --latency MS           every platform answer waits MS milliseconds (a real network)
  --max-per-page N       pages hold at most N calls, whatever perPage asks
  --fault SPEC           repeatable; kind:when[:route[:appId]]
                         kind: 429 500 502 503 truncate hang reset
                         when: 0.1 (rate) | every5 | first3 | after3
                         route: list get management * (default *)
  --fault-seed N         seed of the fault RNG (default: --seed)
  --rate-limit N         real limiter: N requests per minute per app (429 beyond)
  --help`;

export class CliError extends Error {}

export function parseFault(spec: string): FaultRule {
  const [kind, when = "", route = "*", appId] = spec.split(":");
  if (!(FAULT_KINDS as readonly string[]).includes(kind)) throw new CliError(`--fault: unknown kind "${kind}"`);
  if (!(FAULT_ROUTES as readonly string[]).includes(route)) throw new CliError(`--fault: unknown route "${route}"`);
  const rule: FaultRule = { kind: kind as FaultRule["kind"], route: route as FaultRule["route"], ...(appId ? { appId } : {}) };
  const every = /^every(\d+)$/.exec(when);
  const first = /^first(\d+)x?$/.exec(when);
  const after = /^after(\d+)$/.exec(when);
  if (every) rule.everyNth = Number(every[1]);
  else if (first) rule.firstN = Number(first[1]);
  else if (after) rule.afterN = Number(after[1]);
  else if (/^(0(\.\d+)?|1(\.0+)?)$/.test(when)) rule.rate = Number(when);
  else throw new CliError(`--fault: "${when}" is not a rate (0..1), everyN, firstN or afterN`);
  return rule;
}

export function parseAppsList(text: string): EmulatorAppSpec[] {
  return text.split(",").filter((s) => s.trim() !== "").map((item) => {
    const [appId, count, region = "us"] = item.trim().split(":");
    if (!appId || !/^\d+$/.test(count ?? "")) throw new CliError(`--apps: "${item}" is not id:count[:region]`);
    if (!(REGIONS as readonly string[]).includes(region)) throw new CliError(`--apps: region "${region}" is not us, eu or in`);
    return { appId, count: Number(count), region: region as Region };
  });
}

function intOpt(name: string, v: string | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  if (!/^\d+$/.test(v)) throw new CliError(`--${name} must be a non-negative integer`);
  return Number(v);
}

export function parseCli(argv: string[]): { help: true } | { help: false; options: EmulatorOptions & { port: number } } {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: "string" }, seed: { type: "string" }, apps: { type: "string" }, months: { type: "string" },
      now: { type: "string" }, "management-key": { type: "string" }, "management-secret": { type: "string" },
      "ignore-per-page": { type: "string" }, "invalid-records": { type: "boolean" }, order: { type: "string" },
      fault: { type: "string", multiple: true }, "fault-seed": { type: "string" }, "rate-limit": { type: "string" },
      help: { type: "boolean" }, "max-meeting-size": { type: "string" }, prerender: { type: "boolean" },
      mix: { type: "string" }, latency: { type: "string" }, "max-per-page": { type: "string" },
      "non-converging": { type: "string" }, "session-ids": { type: "string" },
    },
    strict: true,
  });
  if (values.help) return { help: true };
  const seed = intOpt("seed", values.seed, 42);
  const months = values.months === undefined ? 6 : Number(values.months);
  if (!(months > 0)) throw new CliError("--months must be a positive number");
  const order = values.order ?? "newest";
  if (!["newest", "oldest", "shuffled"].includes(order)) throw new CliError("--order must be newest, oldest or shuffled");
  const mix = values.mix ?? "standard";
  if (!isDataMixName(mix)) throw new CliError(`--mix must be one of ${DATA_MIX_NAMES.join(", ")}`);
  const sessionIds = values["session-ids"] ?? "time";
  if (!isSessionIdOrder(sessionIds)) throw new CliError(`--session-ids must be one of ${SESSION_ID_ORDERS.join(", ")}`);
  const endless = values["non-converging"] ?? "off";
  if (!(NON_CONVERGING as readonly string[]).includes(endless)) throw new CliError(`--non-converging must be one of ${NON_CONVERGING.join(", ")}`);
  const faults: FaultConfig = {
    rules: (values.fault ?? []).map(parseFault),
    seed: intOpt("fault-seed", values["fault-seed"], seed),
    rateLimitPerMinute: intOpt("rate-limit", values["rate-limit"], 0),
  };
  return {
    help: false,
    options: {
      port: intOpt("port", values.port, 4010),
      seed,
      months,
      now: values.now === undefined ? undefined : intOpt("now", values.now, 0),
      apps: parseAppsList(values.apps ?? "demo-sales:2000,demo-support:800"),
      management: { key: values["management-key"], secret: values["management-secret"] },
      quirks: {
        ignorePerPage: intOpt("ignore-per-page", values["ignore-per-page"], 0),
        invalidRecords: values["invalid-records"] ?? false,
        order: order as ListOrder,
        maxPerPage: intOpt("max-per-page", values["max-per-page"], 0),
        latencyMs: intOpt("latency", values.latency, 0),
        nonConverging: endless as NonConverging,
      },
      faults,
      prerender: values.prerender ?? false,
      mix,
      sessionIds,
      maxMeetingSize: values["max-meeting-size"] === undefined ? undefined : Math.max(3, intOpt("max-meeting-size", values["max-meeting-size"], 12)),
    },
  };
}
