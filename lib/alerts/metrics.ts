/**
 * A rule's metric over one window. Numbers about calls come only from the analytics
 * engine interface (so alerts read the same numbers on the in-memory engine and on
 * ClickHouse); webhook deliveries and sync runs are counted from their own tables by the
 * ingest and sync query functions.
 */
import type { Db } from "@/db/client";
import { filters as buildFilters, type Filters } from "@/lib/analytics/filters";
import type { AnalyticsEngine } from "@/lib/analytics/engine";
import { countDeliveries } from "@/lib/ingest/queries";
import { countFailedRuns } from "@/lib/sync/runs";
import { appIndex } from "./rules";
import type { AlertFilters, Metric } from "./schema";

/** [from, to) in epoch seconds, aligned to the rule's window. */
export interface WindowRange {
  from: number;
  to: number;
}

export interface Measurement {
  value: number;
  /** Calls in the window under the rule's filters (what `minCalls` is compared with). */
  calls: number;
}

/** Rules are made by admins: their reports see every app, narrowed by the rule's own `app` filter. */
const EVERY_APP = { appPks: "all" as const };

const round3 = (n: number) => Math.round(n * 1000) / 1000;

function callFilters(f: AlertFilters, range: WindowRange): Filters {
  return buildFilters({
    apps: f.app ?? [],
    type: f.type,
    mode: f.mode,
    status: f.status,
    receiverType: f.receiverType,
    hasRecording: f.hasRecording,
    uid: f.uid,
    participantsCount: f.participantsCount,
    from: range.from,
    to: range.to,
    tz: "UTC",
  });
}

async function appPksOf(db: Db, f: AlertFilters): Promise<number[]> {
  const apps = await appIndex(db);
  if (!f.app?.length) return [...apps.values()];
  return f.app.map((appId) => {
    const pk = apps.get(appId);
    if (pk === undefined) throw new Error(`app "${appId}" is not registered (any more)`);
    return pk;
  });
}

async function callsIn(engine: AnalyticsEngine, f: Filters): Promise<number> {
  return (await engine.report("totals", f, EVERY_APP)).current.calls;
}

/** The metric's value in the window, and the window's calls. */
export async function measure(db: Db, engine: AnalyticsEngine, metric: Metric, f: AlertFilters, range: WindowRange, needCalls: boolean): Promise<Measurement> {
  const cf = callFilters(f, range);
  switch (metric) {
    case "unansweredRate":
    case "rejectedRate": {
      // Both rates from the status breakdown: every call has exactly one status row.
      const rows = (await engine.report("breakdowns", cf, EVERY_APP)).data.filter((r) => r.dimension === "status");
      const calls = rows.reduce((n, r) => n + r.calls, 0);
      const hits = rows.find((r) => r.value === (metric === "unansweredRate" ? "unanswered" : "rejected"))?.calls ?? 0;
      return { value: calls ? round3((hits / calls) * 100) : 0, calls };
    }
    case "calls":
    case "audioMinutes":
    case "videoMinutes":
    case "avgDurationSeconds": {
      const t = (await engine.report("totals", cf, EVERY_APP)).current;
      const value = metric === "calls" ? t.calls : metric === "audioMinutes" ? t.audioMinutes : metric === "videoMinutes" ? t.videoMinutes : t.avgDurationSeconds;
      return { value, calls: t.calls };
    }
    case "recordings": {
      const page = await engine.report("recordings", { ...cf, perPage: 1 }, EVERY_APP);
      return { value: page.meta.pagination.total, calls: needCalls ? await callsIn(engine, cf) : 0 };
    }
    case "webhookDeliveries":
    case "failedSyncRuns": {
      const pks = await appPksOf(db, f);
      const count = metric === "webhookDeliveries" ? countDeliveries : countFailedRuns;
      return { value: await count(db, pks, range.from * 1000, range.to * 1000), calls: needCalls ? await callsIn(engine, cf) : 0 };
    }
  }
}
