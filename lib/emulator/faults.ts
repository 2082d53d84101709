// Fault injection and a real rate limiter. Faults are decided per request and per route
// with a seeded RNG (or every Nth request) so that a failing test run can be replayed.
import { mulberry32, type Rng } from "./prng";

export type FaultKind = "429" | "500" | "502" | "503" | "truncate" | "hang" | "reset";
export const FAULT_KINDS: readonly FaultKind[] = ["429", "500", "502", "503", "truncate", "hang", "reset"];
/** Routes faults can target; "*" is every platform route (never /__emulator). */
export type FaultRoute = "list" | "get" | "management" | "*";
export const FAULT_ROUTES: readonly FaultRoute[] = ["list", "get", "management", "*"];

export interface FaultRule {
  kind: FaultKind;
  route?: FaultRoute;
  /** Probability 0..1 per matching request. */
  rate?: number;
  /** Fire on every Nth matching request (N, 2N, ...). */
  everyNth?: number;
  /** Fire on the first N matching requests, then stop matching. */
  firstN?: number;
  /** Fire on every matching request after the first N (an upstream that goes down mid-run). */
  afterN?: number;
  /** Stop after firing this many times. */
  times?: number;
  /** Only requests for this app. */
  appId?: string;
}

export interface FaultConfig {
  rules?: FaultRule[];
  seed?: number;
  /** Real limiter: requests per rolling minute per app (and for management). 0 = off. */
  rateLimitPerMinute?: number;
}

interface RuleState {
  rule: FaultRule;
  seen: number;
  fired: number;
}

export class FaultInjector {
  private states: RuleState[] = [];
  private rng: Rng = mulberry32(1);
  private limit = 0;
  private windows = new Map<string, number[]>();
  readonly firedByKind = new Map<FaultKind, number>();

  constructor(config: FaultConfig = {}) {
    this.configure(config);
  }

  configure(config: FaultConfig): void {
    this.states = (config.rules ?? []).map((rule) => ({ rule, seen: 0, fired: 0 }));
    this.rng = mulberry32(config.seed ?? 1);
    this.limit = Math.max(0, Math.floor(config.rateLimitPerMinute ?? 0));
    this.windows.clear();
    // "fired" reports what the current configuration did.
    this.firedByKind.clear();
  }

  snapshot(): FaultConfig & { fired: Record<string, number> } {
    return {
      rules: this.states.map((s) => s.rule),
      rateLimitPerMinute: this.limit,
      fired: Object.fromEntries(this.firedByKind),
    };
  }

  /** The fault to apply to this request, if any. Every matching rule counts the request. */
  decide(route: Exclude<FaultRoute, "*">, appId: string | undefined): FaultKind | undefined {
    let chosen: FaultKind | undefined;
    for (const st of this.states) {
      const r = st.rule;
      if (r.route !== undefined && r.route !== "*" && r.route !== route) continue;
      if (r.appId !== undefined && r.appId !== appId) continue;
      st.seen++;
      if (chosen !== undefined) continue;
      if (r.times !== undefined && st.fired >= r.times) continue;
      const fire =
        (r.firstN !== undefined && st.seen <= r.firstN) ||
        (r.afterN !== undefined && st.seen > r.afterN) ||
        (r.everyNth !== undefined && r.everyNth > 0 && st.seen % r.everyNth === 0) ||
        (r.rate !== undefined && this.rng() < r.rate);
      if (fire) {
        st.fired++;
        chosen = r.kind;
      }
    }
    if (chosen) this.firedByKind.set(chosen, (this.firedByKind.get(chosen) ?? 0) + 1);
    return chosen;
  }

  /** Rolling one-minute window. Returns seconds to wait when over the limit. */
  limited(bucket: string, nowMs: number): { retryAfter: number; resetAt: number } | undefined {
    if (this.limit <= 0) return undefined;
    const w = this.windows.get(bucket) ?? [];
    while (w.length > 0 && w[0] <= nowMs - 60_000) w.shift();
    if (w.length >= this.limit) {
      const resetMs = w[0] + 60_000;
      return { retryAfter: Math.max(1, Math.ceil((resetMs - nowMs) / 1000)), resetAt: Math.ceil(resetMs / 1000) };
    }
    w.push(nowMs);
    this.windows.set(bucket, w);
    return undefined;
  }

  get rateLimitPerMinute(): number {
    return this.limit;
  }
}
