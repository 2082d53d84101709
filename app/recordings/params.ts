import { createLoader, parseAsStringLiteral } from "nuqs/server";

/** The Recordings page's two lists: links received, or flagged calls still awaiting theirs. */
export const RECORDING_VIEWS = ["links", "awaiting"] as const;
export const viewParsers = { view: parseAsStringLiteral(RECORDING_VIEWS).withDefault("links") };
export const loadView = createLoader(viewParsers);
