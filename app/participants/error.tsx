"use client";

export { PageErrorBoundary as default } from "@/components/page-error";
