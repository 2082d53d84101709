// Parsing of the call-list query string: the nine filters of the seed plus page/perPage.
import type { CallFilters } from "./store";
import { CALL_MODES, CALL_STATUSES, CALL_TYPES, RECEIVER_TYPES, type CallMode, type CallStatus, type CallType, type ReceiverType } from "./types";

export const DEFAULT_PER_PAGE = 100;
export const MAX_PER_PAGE = 1000;

export interface ListQuery {
  filters: CallFilters;
  page: number;
  perPage: number;
}

export class QueryError extends Error {
  constructor(readonly param: string, message: string) {
    super(message);
  }
}

function oneOf<T extends string>(name: string, v: string, allowed: readonly T[]): T {
  if ((allowed as readonly string[]).includes(v)) return v as T;
  throw new QueryError(name, `The ${name} must be one of ${allowed.join(", ")}.`);
}

function integer(name: string, v: string, min: number): number {
  if (!/^\d+$/.test(v)) throw new QueryError(name, `The ${name} must be an integer.`);
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min) throw new QueryError(name, `The ${name} must be at least ${min}.`);
  return n;
}

/** Empty values are rejected like any other invalid value: a client should omit a
 * filter it does not use. perPage above 1000 is clamped to 1000 (not an error). */
export function parseListQuery(params: URLSearchParams): ListQuery {
  const f: CallFilters = {};
  const get = (k: string): string | undefined => params.get(k) ?? undefined;
  const type = get("type");
  if (type !== undefined) f.type = oneOf<CallType>("type", type, CALL_TYPES);
  const mode = get("mode");
  if (mode !== undefined) f.mode = oneOf<CallMode>("mode", mode, CALL_MODES);
  const status = get("status");
  if (status !== undefined) f.status = oneOf<CallStatus>("status", status, CALL_STATUSES);
  const rt = get("receiverType");
  if (rt !== undefined) f.receiverType = oneOf<ReceiverType>("receiverType", rt, RECEIVER_TYPES);
  const pc = get("participantsCount");
  if (pc !== undefined) f.participantsCount = integer("participantsCount", pc, 0);
  const started = get("startedAt");
  if (started !== undefined) f.startedAt = integer("startedAt", started, 0);
  const ended = get("endedAt");
  if (ended !== undefined) f.endedAt = integer("endedAt", ended, 0);
  const rec = get("hasRecording");
  if (rec !== undefined) {
    if (rec === "true" || rec === "1") f.hasRecording = true;
    else if (rec === "false" || rec === "0") f.hasRecording = false;
    else throw new QueryError("hasRecording", "The hasRecording must be true or false.");
  }
  const uid = get("uid");
  if (uid !== undefined) {
    if (uid === "") throw new QueryError("uid", "The uid must not be empty.");
    f.uid = uid;
  }
  const pageText = get("page");
  const perPageText = get("perPage");
  const page = pageText === undefined ? 1 : integer("page", pageText, 1);
  const perPage = perPageText === undefined ? DEFAULT_PER_PAGE : Math.min(MAX_PER_PAGE, integer("perPage", perPageText, 1));
  return { filters: f, page, perPage };
}
