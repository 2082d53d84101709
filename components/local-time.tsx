"use client";

import { useSyncExternalStore } from "react";

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
    <time dateTime={date.toISOString()} title={format(date, "UTC", seconds)}>
      {format(date, zone, seconds)}
    </time>
  );
}

const subscribeNever = () => () => undefined;
const serverZone = () => "UTC";
function browserZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

const formats = new Map<string, Intl.DateTimeFormat>();
function format(date: Date, timeZone: string, seconds: boolean): string {
  const key = `${timeZone}\u0000${seconds}`;
  let f = formats.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat("en", {
      timeZone,
      year: "numeric",
      month: "short",
      day: "numeric",
      hour: "2-digit",
      minute: "2-digit",
      ...(seconds ? { second: "2-digit" } : {}),
      hourCycle: "h23",
      timeZoneName: "short",
    });
    formats.set(key, f);
  }
  return f.format(date);
}
