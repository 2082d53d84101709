import Link from "next/link";
import { signOutAction } from "@/app/signin/actions";
import { db } from "@/db";
import { firingCount } from "@/lib/alerts/history";
import type { Caller } from "@/lib/auth/authorize";
import { logger } from "@/lib/log/logger";
import { AlertsBadge } from "./alerts-badge";
import { MainNav } from "./main-nav";

/** Rules firing now that the caller may see; the header never fails over it. */
async function firingFor(caller: Caller): Promise<number> {
  try {
    return await firingCount(db(), caller);
  } catch (err) {
    logger.warn({ err: err instanceof Error ? err.message : String(err) }, "alerts badge unavailable");
    return 0;
  }
}

/**
 * The signed-in header: product name, navigation (with the number of alerts firing),
 * who is signed in (email and role) and Sign out. Admin-only links are shown to admins only; the pages check again.
 */
export async function AppHeader({ caller }: { caller: Caller }) {
  return (
    <header className="app-header">
      <a href="#main" className="skip-link">
        Skip to content
      </a>
      <div className="app-header-inner">
        <Link href="/" className="brand">
          Callboard
        </Link>
        <MainNav isAdmin={caller.role === "admin"} alerts={<AlertsBadge initial={await firingFor(caller)} />} />
        <div className="app-user">
          <Link href="/preferences" className="app-user-email" data-testid="signed-in-email" title={`${caller.email}: your default time zone and apps`}>
            {caller.email}
          </Link>
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
