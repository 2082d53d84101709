"use client";

import { QueryClient, QueryClientProvider, isServer } from "@tanstack/react-query";
import { NuqsAdapter } from "nuqs/adapters/next/app";
import type { ReactNode } from "react";
import { PreferencesProvider, type Preferences } from "@/components/preferences";
import { retryReport } from "@/components/use-report";

/**
 * react-query and the nuqs URL adapter for every page. staleTime above 0: data the
 * server prefetched (and hydrated) is not fetched again on mount.
 */
function makeQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: { queries: { staleTime: 60_000, gcTime: 5 * 60_000, retry: retryReport, refetchOnWindowFocus: false } },
  });
}

let browserClient: QueryClient | undefined;

function getQueryClient(): QueryClient {
  // A fresh client per server render; one for the life of the browser tab.
  if (isServer) return makeQueryClient();
  browserClient ??= makeQueryClient();
  return browserClient;
}

export function Providers({ preferences, children }: { preferences: Preferences; children: ReactNode }) {
  const client = getQueryClient();
  return (
    <QueryClientProvider client={client}>
      <NuqsAdapter>
        <PreferencesProvider value={preferences}>{children}</PreferencesProvider>
      </NuqsAdapter>
    </QueryClientProvider>
  );
}
