"use client";

import Link from "next/link";
import { usePathname, useSearchParams } from "next/navigation";
import { Suspense, useEffect, useRef, useState, type ReactNode } from "react";
import { carriedFilters, withFilters } from "@/lib/ui/carry";

/** The report pages: each reads the shared filters from its URL, and a link to one carries them. */
const REPORT_LINKS = [
  { href: "/", text: "Overview" },
  { href: "/calls", text: "Calls" },
  { href: "/participants", text: "Participants" },
  { href: "/apps", text: "Tenant apps" },
  { href: "/recordings", text: "Recordings" },
  { href: "/statements", text: "Statements" },
  { href: "/live", text: "Live now" },
  { href: "/events", text: "Events" },
  { href: "/sync", text: "Sync" },
] as const;

const REPORT_PATHS = new Set<string>(REPORT_LINKS.map((l) => l.href));

/**
 * The main navigation. Links to report pages carry the filters (zone included) of the
 * page the person is on, so choosing Asia/Kolkata on Calls and opening Overview stays in
 * Kolkata; on a call's page they are the filters of the list it was opened from; on a page
 * without filters (Settings, Alerts) the last ones seen. After a move the focus goes to
 * the new page's heading (a screen reader then reads where it landed, and Tab goes on
 * from there, not from the header).
 */
export function MainNav({ isAdmin, alerts }: { isAdmin: boolean; alerts: ReactNode }) {
  return (
    <nav aria-label="Main" className="app-nav">
      <Suspense fallback={<Links filters={new URLSearchParams()} />}>
        <CarryingLinks />
      </Suspense>
      {alerts}
      {isAdmin ? <Link href="/settings">Settings</Link> : null}
    </nav>
  );
}

function CarryingLinks() {
  const pathname = usePathname();
  const search = useSearchParams();
  const onCall = /^\/calls\/[^/]+$/.test(pathname);
  const here = REPORT_PATHS.has(pathname) ? carriedFilters(new URLSearchParams(search.toString())) : onCall ? carriedFilters(new URLSearchParams(search.get("back") ?? "")) : null;
  const [last, setLast] = useState<string>("");
  const current = here?.toString();
  if (current !== undefined && current !== last) setLast(current);
  useFocusOnMove(pathname);
  return <Links filters={new URLSearchParams(current ?? last)} current={pathname} />;
}

function Links({ filters, current }: { filters: URLSearchParams; current?: string }) {
  return (
    <>
      {REPORT_LINKS.map((l) => (
        <Link key={l.href} href={withFilters(l.href, filters)} aria-current={current === l.href ? "page" : undefined}>
          {l.text}
        </Link>
      ))}
    </>
  );
}

/**
 * Moves the focus to the page's h1 once the path changes (not on the first load, not on a
 * filter change). A page may show its loading state first and its heading a moment later,
 * so it waits for the heading (up to a few seconds), unless the person has moved the focus
 * themselves in the meantime.
 */
function useFocusOnMove(pathname: string) {
  const previous = useRef(pathname);
  useEffect(() => {
    if (previous.current === pathname) return;
    previous.current = pathname;
    const focusHeading = (): boolean => {
      const heading = document.querySelector<HTMLElement>("main h1");
      if (!heading) return false;
      if (document.activeElement === heading) return true;
      const active = document.activeElement;
      // The person is somewhere of their own choosing (not the link they followed): leave them there.
      if (active && active !== document.body && !active.closest("nav")) return true;
      if (!heading.hasAttribute("tabindex")) heading.setAttribute("tabindex", "-1");
      heading.focus({ preventScroll: true });
      return false;
    };
    focusHeading();
    const observer = new MutationObserver(() => void focusHeading());
    observer.observe(document.body, { childList: true, subtree: true });
    const stop = setTimeout(() => observer.disconnect(), 5000);
    return () => {
      clearTimeout(stop);
      observer.disconnect();
    };
  }, [pathname]);
}
