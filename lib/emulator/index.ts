// Public surface of the emulator for scripts, benchmarks and tests.
export { startEmulator, type EmulatorOptions, type RunningEmulator } from "./server";
export { spawnEmulator, type SpawnOptions, type SpawnedEmulator, type SpawnedApp } from "./test-emulator";
export { createAdminClient, type EmulatorAdmin } from "./admin-client";
export { generateAppCalls, generateCanonicalCalls, formatHms, type AppGenParams } from "./generator";
export { canonicalFromWire, toWire, serializeWire } from "./quirks";
export { apiKeyFor, type EmulatorQuirks, type EmulatorAppSpec, type AppInfo, type RequestLogEntry } from "./state";
export type { FaultConfig, FaultRule, FaultKind, FaultRoute } from "./faults";
export type { CallFilters, AdvanceOptions, AdvanceResult } from "./store";
export * from "./webhooks";
export type * from "./types";
