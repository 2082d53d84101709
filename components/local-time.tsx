"use client";

import { useSyncExternalStore } from "react";
import { formatDateTime } from "@/lib/ui/format";

/**
 * A moment on the settings pages (audit log, tokens, price sheets, last sync), in the
 * reader's own time zone and named: "Nov 27, 2026, 03:25 GMT+5:30". Those pages have no
 * time-zone filter as the reports do, and a bare UTC time made every admin do sums.
 *
 * The server cannot know the browser's zone: it renders UTC ("… UTC"), and the browser
 * renders its own zone as soon as it hydrates (useSyncExternalStore's server snapshot
 * keeps the two renders from disagreeing). The exact instant stays in `dateTime`, and UTC
 * in the tooltip.
 */
export function LocalTime({ ms, seconds = false }: { ms: number; seconds?: boolean }) {
  const zone = useSyncExternalStore(subscribeNever, browserZone, serverZone);
  const date = new Date(ms);
  if (!Number.isFinite(date.getTime())) return <span>—</span>;
  return (
    <time dateTime={date.toISOString()} title={formatDateTime(ms / 1000, "UTC", { seconds, zoneName: true })}>
      {formatDateTime(ms / 1000, zone, { seconds, zoneName: true })}
    </time>
  );
}

const subscribeNever = () => () => undefined;
const serverZone = () => "UTC";
function browserZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}
