/**
 * The memory engine's public face: the engine itself (lib/analytics/engine.ts picks it),
 * and what the bench and the warehouse's write path need to know of it. Everything else
 * in this folder is internal (eslint.config.mjs says so).
 */
export { createMemoryEngine, type MemoryEngine, type MemoryEngineOptions, type StoreInfo } from "./engine";
export { changelogTriggerStatements } from "./store/changelog-sql";
