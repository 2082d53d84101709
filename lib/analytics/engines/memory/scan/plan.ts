import type { Db } from "@/db/client";
import type { Filters } from "../../../filters";
import { analyticsStore, currentStore } from "../store/load";
import type { AnalyticsStore } from "../store/store";
import { runningHoursOf, type RunningHours } from "../../../running-hours";
import { cellFilter } from "./cell-codec";

/**
 * The filter plan: the filter model compiled against one store — lookup tables (app pk
 * → kept, cell → kept: the cell codec's cellFilter), the start window and the other
 * tests every kernel applies to a slot. Every kernel walks the slots with the same
 * tests (app, start, cell, participants count, then uid, then weekday/hour) written out
 * inline: a shared predicate or visitor callback would cost a call per slot. The last two
 * call a function, and only when set; block sums never serve them (a block's sums are by
 * start, a weekday/hour test needs each call's run).
 */

function appTable(s: AnalyticsStore, appPks: number[] | "all"): Uint8Array {
  const max = s.maxApp;
  const ok = new Uint8Array(max + 1);
  if (appPks === "all") ok.fill(1);
  else for (const p of appPks) if (p <= max) ok[p] = 1;
  ok[0] = 0; // empty slots
  return ok;
}

/** Ids (uid dictionary) of `uid` in the allowed apps. */
function uidIdsOf(s: AnalyticsStore, uid: string, appOk: Uint8Array): Set<number> {
  const out = new Set<number>();
  for (const [appPk, m] of s.uidIds) {
    const id = m.get(uid);
    if (id !== undefined && appOk[appPk]) out.add(id);
  }
  return out;
}

export interface SelectOptions {
  /** Ignore from/to (the heatmap's window is not a start filter). */
  ignoreTime?: boolean;
  /**
   * Use the store as it stands, without catching up with the warehouse: a second pass
   * of the same job must see what the first one saw (the calls CSV's head, then order).
   */
  asIs?: boolean;
}

/** A filter compiled against one store: lookup tables and bounds (`uidIds` undefined: no uid filter). */
export interface Plan {
  s: AnalyticsStore;
  appOk: Uint8Array;
  cellOk: Uint8Array;
  from: number;
  to: number;
  pc: number;
  uidIds: Set<number> | undefined;
  /**
   * The weekday/hour filter (running-hours.ts), undefined when unset. When set it carries
   * the period (the hours examined, as the heatmap's) and `from`/`to` are open.
   */
  hours: RunningHours | undefined;
  /** Nothing can match (a uid filter naming no known uid). */
  none: boolean;
}

export function compile(db: Db, f: Filters, appPks: number[] | "all", opts: SelectOptions = {}): Plan {
  const s = opts.asIs ? currentStore(db) : analyticsStore(db);
  const appOk = appTable(s, appPks);
  const uidIds = f.uid === undefined ? undefined : uidIdsOf(s, f.uid, appOk);
  const hours = runningHoursOf(f);
  const openTime = opts.ignoreTime || hours !== undefined;
  return {
    s, appOk, cellOk: cellFilter(f),
    from: openTime || f.from === undefined ? -Infinity : f.from,
    to: openTime || f.to === undefined ? Infinity : f.to,
    pc: f.participantsCount ?? -1,
    uidIds, hours, none: uidIds !== undefined && uidIds.size === 0,
  };
}

/** Whether call slot i lists one of the uid ids (the uid filter). */
export function listsUid(s: AnalyticsStore, ids: Set<number>, i: number): boolean {
  const uid = s.uid.a;
  for (let j = s.pOff.a[i], e = j + s.pLen.a[i]; j < e; j++) if (ids.has(uid[j])) return true;
  return false;
}
