// Everything one running emulator knows: apps, quirk switches, faults, credentials.
import { FaultInjector, type FaultConfig } from "./faults";
import type { DataMixName } from "./mixes";
import type { SessionIdOrder } from "./session-ids";
import type { NonConverging } from "./non-converging";
import { hashString, hex, mix, mulberry32 } from "./prng";
import { AppStore } from "./store";
import type { Region } from "./types";

export type ListOrder = "newest" | "oldest" | "shuffled";

export interface EmulatorQuirks {
  /** When > 0 the server ignores perPage and always serves pages of this size. */
  ignorePerPage: number;
  /** Serve a few unparseable records (missing sessionId, type object, participants string). */
  invalidRecords: boolean;
  /** List order; "shuffled" keeps page membership of "newest" but permutes within a page. */
  order: ListOrder;
  /** When > 0, perPage is capped at this (the platform's page size may be smaller than asked). */
  maxPerPage: number;
  /** Milliseconds every platform answer waits before it is sent: a real network and a busy platform. */
  latencyMs: number;
  /** A list that never ends (non-converging.ts): "growing" or "repeating"; "off" by default. */
  nonConverging: NonConverging;
}

export const DEFAULT_QUIRKS: EmulatorQuirks = { ignorePerPage: 0, invalidRecords: false, order: "newest", maxPerPage: 0, latencyMs: 0, nonConverging: "off" };

export interface EmulatorAppSpec {
  appId: string;
  count: number;
  region?: Region;
  apiKey?: string;
  months?: number;
  name?: string;
}

export interface AppInfo {
  appId: string;
  apiKey: string;
  region: Region;
  name: string;
  calls: number;
}

export interface RequestLogEntry {
  at: number;
  method: string;
  path: string;
  route: string;
  appId?: string;
  status: number;
  fault?: string;
  headers: Record<string, string>;
}

export interface StateOptions {
  seed: number;
  now: number;
  months: number;
  apps: EmulatorAppSpec[];
  quirks?: Partial<EmulatorQuirks>;
  faults?: FaultConfig;
  management?: { key?: string; secret?: string };
  /** See AppGenParams.maxMeetingSize. */
  maxMeetingSize?: number;
  /** Render every record's served text at start (AppStore.prerender). */
  prerender?: boolean;
  /** The shape of every app's data (lib/emulator/mixes.ts). */
  mix?: DataMixName;
  /** Session ids that follow time (default) or random UUIDs (lib/emulator/session-ids.ts). */
  sessionIds?: SessionIdOrder;
}

/** Deterministic API key: the same seed and app id always give the same key. */
export function apiKeyFor(seed: number, appId: string): string {
  return `ak_${hex(mulberry32(mix(seed, hashString(appId), 0xa91)), 40)}`;
}

export class EmulatorState {
  readonly seed: number;
  readonly now: number;
  readonly months: number;
  readonly apps = new Map<string, AppStore>();
  readonly faults: FaultInjector;
  readonly managementKey: string;
  readonly managementSecret: string;
  quirks: EmulatorQuirks;
  requests: RequestLogEntry[] = [];
  private createdCount = 0;
  private readonly initial: StateOptions;

  constructor(o: StateOptions) {
    this.initial = o;
    this.seed = o.seed;
    this.now = o.now;
    this.months = o.months;
    const rng = mulberry32(mix(o.seed, 0x3a7));
    this.managementKey = o.management?.key ?? `mk_${hex(rng, 24)}`;
    this.managementSecret = o.management?.secret ?? `ms_${hex(rng, 40)}`;
    this.quirks = { ...DEFAULT_QUIRKS, ...o.quirks };
    this.faults = new FaultInjector(o.faults);
    for (const spec of o.apps) this.addApp(spec);
  }

  addApp(spec: EmulatorAppSpec): AppStore {
    const store = new AppStore({
      appId: spec.appId,
      apiKey: spec.apiKey ?? apiKeyFor(this.seed, spec.appId),
      region: spec.region ?? "us",
      seed: this.seed,
      count: spec.count,
      now: this.now,
      months: spec.months ?? this.months,
      name: spec.name,
      maxMeetingSize: this.initial.maxMeetingSize,
      mix: this.initial.mix,
      sessionIds: this.initial.sessionIds,
    });
    if (this.initial.prerender) store.prerender();
    this.apps.set(spec.appId, store);
    return store;
  }

  /** App created through the management API: a fresh, empty app with a unique id. */
  createManagedApp(name: string, region: Region): AppStore {
    this.createdCount++;
    const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 24) || "app";
    let appId = `${slug}-${hex(mulberry32(mix(this.seed, this.createdCount, 0x77)), 6)}`;
    while (this.apps.has(appId)) appId += "x";
    return this.addApp({ appId, count: 0, region, name });
  }

  appInfos(): AppInfo[] {
    return [...this.apps.values()].map((a) => ({ appId: a.appId, apiKey: a.apiKey, region: a.region, name: a.name, calls: a.size }));
  }

  logRequest(e: RequestLogEntry): void {
    this.requests.push(e);
    // Bounded so a long benchmark does not grow memory.
    if (this.requests.length > 2000) this.requests.splice(0, this.requests.length - 1000);
  }

  /** Back to the state the emulator started in: initial apps, quirks and faults. */
  reset(): void {
    this.apps.clear();
    for (const spec of this.initial.apps) this.addApp(spec);
    this.quirks = { ...DEFAULT_QUIRKS, ...this.initial.quirks };
    this.faults.configure(this.initial.faults ?? {});
    this.requests = [];
    this.createdCount = 0;
  }
}
