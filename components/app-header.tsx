import Link from "next/link";
import { signOutAction } from "@/app/signin/actions";
import { db } from "@/db";
import { firingCount } from "@/lib/alerts/history";
import type { Caller } from "@/lib/auth/authorize";
import { logger } from "@/lib/log/logger";
import { AlertsBadge } from "./alerts-badge";

/** Rules firing now that the caller may see; the header never fails over it. */
function firingFor(caller: Caller): number {
  try {
    return firingCount(db(), caller);
  } catch (err) {
    logger.warn({ err: err instanceof Error ? err.message : String(err) }, "alerts badge unavailable");
    return 0;
  }
}

/**
 * The signed-in header: product name, navigation (with the number of alerts firing),
 * who is signed in (email and role) and Sign out. Admin-only links are shown to admins only; the pages check again.
 */
export function AppHeader({ caller }: { caller: Caller }) {
  return (
    <header className="app-header">
      <div className="app-header-inner">
        <Link href="/" className="brand">
          Callboard
        </Link>
        <nav aria-label="Main" className="app-nav">
          <Link href="/">Overview</Link>
          <Link href="/calls">Calls</Link>
          <Link href="/participants">Participants</Link>
          <Link href="/apps">Tenant apps</Link>
          <Link href="/recordings">Recordings</Link>
          <Link href="/statements">Statements</Link>
          <Link href="/live">Live now</Link>
          <Link href="/events">Events</Link>
          <Link href="/sync">Sync</Link>
          <AlertsBadge initial={firingFor(caller)} />
          {caller.role === "admin" ? <Link href="/settings">Settings</Link> : null}
        </nav>
        <div className="app-user">
          <span className="app-user-email" data-testid="signed-in-email" title={caller.email}>
            {caller.email}
          </span>
          <span className="badge" data-testid="signed-in-role">
            {caller.role}
          </span>
          <form action={signOutAction}>
            <button type="submit" className="btn btn-secondary">
              Sign out
            </button>
          </form>
        </div>
      </div>
    </header>
  );
}
