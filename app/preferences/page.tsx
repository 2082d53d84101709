import type { Metadata } from "next";
import { db } from "@/db";
import { readVisibleApps } from "@/lib/analytics";
import { callerPreferences } from "@/lib/auth/preferences";
import { currentCaller } from "@/lib/auth/session";
import { PreferencesForm } from "./preferences-form";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Your defaults" };

/** Every signed-in person's own defaults: the zone and apps a report page starts with. */
export default async function PreferencesPage() {
  const caller = await currentCaller();
  const warehouse = db();
  const apps = (await readVisibleApps(warehouse, caller)).map(({ appId, name }) => ({ appId, name }));
  return (
    <main id="main" tabIndex={-1} className="container">
      <h1>Your defaults</h1>
      <p className="muted">
        A report page opened without a time zone or apps in its address starts with these. Without a saved zone it starts in your browser&apos;s.
      </p>
      <PreferencesForm apps={apps} saved={await callerPreferences(warehouse, caller)} />
    </main>
  );
}
