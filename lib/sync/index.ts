export { syncApp, syncAll } from "./sync-app";
export type { SyncOptions, SyncAllOptions, SyncSummary, SyncTrigger, SkippedRecord, SyncTimings } from "./sync-app";
export { startSyncScheduler } from "./scheduler";
export type { SyncScheduler, SchedulerOptions } from "./scheduler";
