"use client";

import { useEffect, useState } from "react";
import { formatSeconds } from "@/lib/ui/format";

/**
 * A call's duration. The platform's duration of an ongoing call is what it was at the
 * last sync; shown as such it looks final and wrong. An ongoing call's duration runs
 * instead: from its start to now, ticking, set in the "good" colour with a dotted underline (and "running" for screen readers) (the server renders the
 * synced value until the browser's clock takes over).
 */
export function CallDuration({ status, startedAt, durationSeconds }: { status: string | null; startedAt: number | null; durationSeconds: number }) {
  const running = status === "ongoing" && startedAt !== null;
  const [now, setNow] = useState<number | null>(null);
  useEffect(() => {
    if (!running) return;
    const tick = () => setNow(Math.floor(Date.now() / 1000));
    tick();
    const t = setInterval(tick, 1000);
    return () => clearInterval(t);
  }, [running]);
  if (!running) return <>{formatSeconds(durationSeconds)}</>;
  const seconds = now === null ? durationSeconds : Math.max(durationSeconds, now - startedAt);
  return (
    <span className="running-duration" data-testid="running-duration" title="Ongoing at the last sync: counting from its start">
      {formatSeconds(seconds)}
      <span className="sr-only"> running</span>
    </span>
  );
}
