import { PageSkeleton } from "@/components/panel";

export default function Loading() {
  return <PageSkeleton title="Tenant apps" blocks={2} />;
}
