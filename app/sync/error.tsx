"use client";

import { PageErrorBoundary, WAREHOUSE_TROUBLE } from "@/components/page-error";

export default function ErrorBoundary(props: { error: Error & { digest?: string }; reset: () => void }) {
  return <PageErrorBoundary title="Sync" message={WAREHOUSE_TROUBLE} {...props} />;
}
