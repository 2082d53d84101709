import { PageSkeleton } from "@/components/panel";

export default function Loading() {
  return <PageSkeleton title="Call" blocks={3} />;
}
