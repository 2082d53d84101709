export * from "./apps";
export * from "./calls";
export * from "./sync";
