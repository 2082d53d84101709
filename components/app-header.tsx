import Link from "next/link";
import { signOutAction } from "@/app/signin/actions";
import type { Caller } from "@/lib/auth/authorize";

/**
 * The signed-in header: product name, navigation, who is signed in (email and role)
 * and Sign out. Admin-only links are shown to admins only; the pages check again.
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
          {caller.role === "admin" ? <Link href="/settings">Settings</Link> : null}
        </nav>
        <div className="app-user">
          <span data-testid="signed-in-email">{caller.email}</span>
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
