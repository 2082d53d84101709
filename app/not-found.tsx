import type { Metadata } from "next";
import Link from "next/link";

export const metadata: Metadata = { title: "Not found" };

/**
 * The product's own "not found" (HTTP 404): an address that names nothing, or a call or
 * app the signed-in person may not see — the same answer for both, so a viewer learns
 * nothing about other apps.
 */
export default function NotFound() {
  return (
    <main id="main" tabIndex={-1} className="container dash not-found" data-testid="not-found">
      <h1>Not found</h1>
      <p className="muted">There is nothing here you can see: the address may be mistyped, or the call belongs to an app outside your access.</p>
      <p>
        <Link href="/">Overview</Link> · <Link href="/calls">Calls</Link>
      </p>
    </main>
  );
}
