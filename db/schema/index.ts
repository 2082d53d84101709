export * from "./apps";
export * from "./calls";
export * from "./sync";
export * from "./auth";
export * from "./ingest";
export * from "./analytics";
export * from "./alerts";
export * from "./billing";
