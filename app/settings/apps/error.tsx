"use client";

import { OpsError } from "@/app/_ops/error-view";

export default function ErrorBoundary({ reset }: { error: Error; reset: () => void }) {
  return <OpsError title="Tenant apps" reset={reset} />;
}
