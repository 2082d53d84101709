import { performance } from "node:perf_hooks";
import type { CallsClient } from "@/lib/platform/calls-client";
import { PlatformAuthError, PlatformNotFoundError } from "@/lib/platform/errors";
import type { RunState } from "./run-state";
import type { SyncSummary } from "./summary";

/** Calls re-fetched at once. */
const REFRESH_CONCURRENCY = 4;

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Re-fetches calls stored as ongoing that this run did not see, until they end. */
export async function refreshOngoing(
  client: CallsClient,
  state: RunState,
  summary: SyncSummary,
  maxRefresh: number,
  signal: AbortSignal,
): Promise<void> {
  const t0 = performance.now();
  await state.drain();
  const ids = state.writer
    .ongoingSessionIds()
    .filter((id) => !state.seenOngoing.has(id))
    .slice(0, maxRefresh);
  let next = 0;
  const worker = async () => {
    while (next < ids.length) {
      const id = ids[next++];
      try {
        const rec = await client.getCall(id, signal);
        await state.handle([rec]);
        summary.refreshed++;
      } catch (err) {
        if (err instanceof PlatformNotFoundError) {
          summary.refreshMissing++;
          state.note(id, `refresh: the platform no longer knows this ongoing call (${err.message})`);
        } else if (err instanceof PlatformAuthError || signal.aborted) {
          throw err;
        } else {
          state.note(id, `refresh failed: ${errorText(err)}`);
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(REFRESH_CONCURRENCY, ids.length) }, worker));
  summary.timings.refreshMs += performance.now() - t0;
}
