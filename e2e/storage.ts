import path from "node:path";
import { E2E_DIR } from "./fixture";

/** Saved sessions written by auth.setup.ts (inside the e2e scratch folder). */
export const ADMIN_STATE = path.join(E2E_DIR, "auth", "admin.json");
export const VIEWER_STATE = path.join(E2E_DIR, "auth", "viewer.json");
