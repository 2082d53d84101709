"use client";

import { PageErrorBoundary, WAREHOUSE_TROUBLE } from "@/components/page-error";

export default function ErrorBoundary(props: { error: Error & { digest?: string }; reset: () => void }) {
  return <PageErrorBoundary title="Tenant apps" message={WAREHOUSE_TROUBLE} {...props} />;
}
