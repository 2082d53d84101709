import type { Metadata } from "next";
import type { ReactNode } from "react";
import { AppHeader } from "@/components/app-header";
import { optionalCaller } from "@/lib/auth/session";
import { Providers } from "./providers";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Callboard", template: "%s · Callboard" },
  description: "Call analytics for your tenant apps",
};

export default async function RootLayout({ children }: { children: ReactNode }) {
  const caller = await optionalCaller();
  return (
    <html lang="en">
      <body>
        {caller ? <AppHeader caller={caller} /> : null}
        <Providers>{children}</Providers>
      </body>
    </html>
  );
}
