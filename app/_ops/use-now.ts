"use client";

import { useEffect, useState } from "react";

/** The current time, ticking every `ms`; starts at `initial` so the server render and hydration agree. */
export function useNow(ms: number, initial: number): number {
  const [now, setNow] = useState(initial);
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
}
