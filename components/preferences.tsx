"use client";

import { createContext, type ReactNode } from "react";

/** The signed-in person's saved defaults (tz null: none saved, pages start in the browser's zone; apps empty: all). */
export interface Preferences {
  tz: string | null;
  apps: string[];
}

export const PreferencesContext = createContext<Preferences>({ tz: null, apps: [] });

export function PreferencesProvider({ value, children }: { value: Preferences; children: ReactNode }) {
  return <PreferencesContext value={value}>{children}</PreferencesContext>;
}
