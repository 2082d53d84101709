import { PageSkeleton } from "@/components/panel";

export default function Loading() {
  return <PageSkeleton title="Recordings" blocks={1} />;
}
