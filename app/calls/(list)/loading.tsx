import { PageSkeleton } from "@/components/panel";

export default function Loading() {
  return <PageSkeleton title="Calls" blocks={2} />;
}
