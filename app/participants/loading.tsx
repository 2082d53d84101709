import { PageSkeleton } from "@/components/panel";

export default function Loading() {
  return <PageSkeleton title="Participants" blocks={1} />;
}
