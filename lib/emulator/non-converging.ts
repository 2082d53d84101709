// Hostile list answers for the sync's convergence bound (issue 12 item 1): a list whose
// every page is full and whose announced page count is always five ahead of the page
// asked for. "growing" serves new calls on every page, forever (the base records again,
// each round under new sessionIds); "repeating" serves the first three pages over and
// over. The real platform never does either; a broken or hostile one could.
import type { AppStore } from "./store";

export type NonConverging = "off" | "growing" | "repeating";
export const NON_CONVERGING: readonly NonConverging[] = ["off", "growing", "repeating"];

/** Pages the announced page count runs ahead of the page served. */
const AHEAD = 5;
/** Pages a "repeating" list cycles through. */
const CYCLE = 3;

export interface EndlessPage {
  texts: string[];
  meta: { pagination: { total: number; count: number; per_page: number; current_page: number; total_pages: number } };
}

export function endlessPage(app: AppStore, mode: Exclude<NonConverging, "off">, page: number, perPage: number, invalidRecords: boolean): EndlessPage {
  const texts: string[] = [];
  const size = app.size;
  const servedPage = mode === "repeating" ? ((page - 1) % CYCLE) + 1 : page;
  for (let pos = (servedPage - 1) * perPage; size > 0 && pos < servedPage * perPage; pos++) {
    const slot = app.slotAt(pos % size);
    const text = app.text(slot, invalidRecords);
    const round = Math.floor(pos / size);
    if (round === 0) texts.push(text);
    else {
      const id = app.record(slot).sessionId;
      texts.push(text.replace(`"sessionId":"${id}"`, `"sessionId":"${id}~${round}"`));
    }
  }
  const totalPages = page + AHEAD;
  return { texts, meta: { pagination: { total: totalPages * perPage, count: texts.length, per_page: perPage, current_page: page, total_pages: totalPages } } };
}
