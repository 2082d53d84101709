import type { Metadata } from "next";
import type { ReactNode } from "react";
import { AppHeader } from "@/components/app-header";
import { db } from "@/db";
import { callerPreferences } from "@/lib/auth/preferences";
import { optionalCaller } from "@/lib/auth/session";
import { Providers } from "./providers";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Callboard", template: "%s · Callboard" },
  description: "Call analytics for your tenant apps",
};

export default async function RootLayout({ children }: { children: ReactNode }) {
  const caller = await optionalCaller();
  const saved = caller ? await callerPreferences(db(), caller) : null;
  return (
    <html lang="en">
      <body>
        {caller ? <AppHeader caller={caller} /> : null}
        <Providers preferences={{ tz: saved?.timeZone ?? null, apps: saved?.apps ?? [] }}>{children}</Providers>
      </body>
    </html>
  );
}
