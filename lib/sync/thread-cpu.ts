import { readFileSync } from "node:fs";

/**
 * CPU time (user + system, ms) of the calling thread so far, from Linux's
 * /proc/thread-self/stat; undefined elsewhere. The sync's two sides (the thread that
 * fetches and parses, the write worker) run in parallel, so the slower of the two bounds
 * a backfill: the bench reports each side's CPU per call, which a shared box's load
 * moves far less than wall time. `process.cpuUsage()` is per process, and Node 20 has no
 * per-thread counterpart.
 */
export function threadCpuMs(): number | undefined {
  let stat: string;
  try {
    stat = readFileSync("/proc/thread-self/stat", "latin1");
  } catch {
    return undefined;
  }
  // Fields after the command name (which may hold spaces, so split after its `)`):
  // state is field 3, utime and stime are fields 14 and 15, in clock ticks.
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(f[11]) + Number(f[12]);
  return Number.isFinite(ticks) ? ticks * (1000 / CLOCK_TICKS_PER_SECOND) : undefined;
}

/** USER_HZ: 100 on every Linux Node supports (the kernel ABI fixes it for /proc). */
const CLOCK_TICKS_PER_SECOND = 100;
