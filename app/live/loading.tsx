import "@/app/_ops/ops.css";
import { OpsLoading } from "@/app/_ops/loading";

export default function Loading() {
  return <OpsLoading title="Live now" />;
}
