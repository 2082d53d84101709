"use client";

import Link from "next/link";
import { useEffect, useState } from "react";
import "./alerts-badge.css";
import { withBasePath } from "@/lib/http/base-path";

const REFRESH_MS = 60_000;

/**
 * "Alerts" in the header with the number of rules firing now (of the apps the caller may
 * see). Rendered with the server's count, then refreshed every minute while the page is open.
 */
export function AlertsBadge({ initial }: { initial: number }) {
  const [firing, setFiring] = useState(initial);
  useEffect(() => {
    const t = setInterval(() => {
      fetch(withBasePath("/api/v1/alerts?limit=1"), { headers: { accept: "application/json" }, cache: "no-store" })
        .then((r) => (r.ok ? (r.json() as Promise<{ firing?: number }>) : null))
        .then((b) => {
          if (typeof b?.firing === "number") setFiring(b.firing);
        })
        .catch(() => undefined);
    }, REFRESH_MS);
    return () => clearInterval(t);
  }, []);
  return (
    <Link href="/alerts" className="alerts-nav-link" aria-label={firing > 0 ? `Alerts, ${firing} firing` : "Alerts"}>
      Alerts
      {firing > 0 ? (
        <span className="alerts-badge" data-testid="alerts-badge">
          {firing}
        </span>
      ) : null}
    </Link>
  );
}
